"""GorillaFileSystem: an in-memory file tree with shell-like commands.

Behaviour mirrors BFCL's class of the same name, learned by running it, quirks included:
``cd("..")`` answers ``{}``, ``mv`` of a directory into itself drops it, ``cp`` of a
directory makes a new directory that shares its children with the original (so later
writes show in both), ``echo`` only writes to existing files. Keeping them keeps states
and results equal to BFCL's for the same calls.
"""

from __future__ import annotations

import copy
import datetime

from fcenv.backends.long_context import filler

_INVALID_NAME_CHARACTERS = ("/", "\\", "?", "%", "*", ":", "|", '"', "<", ">")
_SIZE_UNITS = ("B", "KB", "MB", "GB", "TB")
# A directory copied or moved into itself makes the tree endless; BFCL's recursive walks
# then die on Python's recursion limit, ours stop at the first repeat with the same error.
_ENDLESS_TREE = "maximum recursion depth exceeded while calling a Python object"


class File:
    def __init__(self, name: str, content: str = "") -> None:
        self.name = name
        self.content = content
        self._last_modified = datetime.datetime.now()

    def _write(self, new_content: str) -> None:
        self.content = new_content
        self._last_modified = datetime.datetime.now()

    def _read(self) -> str:
        return self.content

    def _append(self, additional_content: str) -> None:
        self.content += additional_content
        self._last_modified = datetime.datetime.now()

    def __repr__(self):
        return f"<<File: {self.name}, Content: {self.content}>>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, File):
            return False
        return self.name == other.name and self.content == other.content


class Directory:
    def __init__(self, name: str, parent: Directory | None = None) -> None:
        self.name = name
        self.parent = parent
        self.contents: dict[str, File | Directory] = {}

    def _add_file(self, file_name: str, content: str = "") -> None:
        if file_name in self.contents:
            raise ValueError(f"File '{file_name}' already exists in directory '{self.name}'.")
        self.contents[file_name] = File(file_name, content)

    def _add_directory(self, dir_name: str) -> None:
        if dir_name in self.contents:
            raise ValueError(f"Directory '{dir_name}' already exists in directory '{self.name}'.")
        self.contents[dir_name] = Directory(dir_name, self)

    def _get_item(self, item_name: str) -> File | Directory | None:
        if item_name == ".":
            return self
        return self.contents.get(item_name)

    def _list_contents(self) -> list[str]:
        return list(self.contents.keys())

    def __repr__(self):
        parent_name = self.parent.name if self.parent else None
        return f"<Directory: {self.name}, Parent: {parent_name}, Contents: {self.contents}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Directory):
            return False
        return self.name == other.name and self.contents == other.contents


def _human_size(size: float) -> str:
    for unit in _SIZE_UNITS:
        if size < 1024:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


class GorillaFileSystem:
    def __init__(self) -> None:
        self._api_description = (
            "This tool belongs to the Gorilla file system. It is a simple file system that allows users to "
            "perform basic file operations such as navigating directories, creating files and directories, "
            "reading and writing to files, etc."
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GorillaFileSystem):
            return False
        return self.root == other.root

    # ----- loading -----

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        self.long_context = long_context
        self.root = Directory("/", None)
        if "root" in scenario:
            root_name = next(iter(scenario["root"]))
            self.root = self._load_directory(
                scenario["root"][root_name]["contents"], None, root_name
            )
        self._current_dir = self.root

    def _load_directory(
        self, current: dict, parent: Directory | None = None, name: str = ""
    ) -> Directory:
        directory = Directory(name, parent)
        for item_name, item in current.items():
            if item["type"] == "file":
                content = item["content"]
                if self.long_context and item_name not in filler("FILES_TAIL_USED"):
                    content = content + filler("FILE_CONTENT_EXTENSION")
                directory.contents[item_name] = File(item_name, content)
            elif item["type"] == "directory":
                directory.contents[item_name] = self._load_directory(
                    item["contents"], directory, item_name
                )
        if self.long_context and not any(
            isinstance(item, Directory) for item in directory.contents.values()
        ):
            self._populate_directory(directory)
        return directory

    def _populate_directory(self, directory: Directory) -> None:
        # BFCL pads every leaf directory with the same list of empty image files.
        for file_name in filler("POPULATE_FILE_EXTENSION"):
            directory._add_file(file_name)

    # ----- helpers -----

    def _validate_file_or_directory_name(self, dir_name: str) -> bool:
        return not any(character in dir_name for character in _INVALID_NAME_CHARACTERS)

    def _navigate_to_directory(self, path: str | None) -> Directory | dict[str, str]:
        """A directory by path: absolute from the root or relative to the current one; no ``..``."""
        if path is None or path == ".":
            return self._current_dir
        if path == "/":
            return self.root
        parts = path.strip("/").split("/")
        directory = self.root if path.startswith("/") else self._current_dir
        for part in parts:
            if part == ".":
                continue
            item = directory._get_item(part)
            if not isinstance(item, Directory):
                return {"error": f"cd: '{path}': No such file or directory"}
            directory = item
        return directory

    def _lookup(self, name: str) -> File | Directory | None:
        """An entry of the current directory; an entry named "." resolves to the directory itself."""
        if name not in self._current_dir.contents:
            return None
        return self._current_dir._get_item(name)

    def _file(self, file_name: str) -> File | None:
        item = self._lookup(file_name)
        return item if isinstance(item, File) else None

    def _path_of(self, directory: Directory) -> str:
        names = []
        while directory is not None:
            names.append(directory.name)
            directory = directory.parent
        return "/" + "/".join(reversed(names))

    # ----- commands -----

    def pwd(self):
        return {"current_working_directory": self._path_of(self._current_dir)}

    def ls(self, a: bool = False) -> dict[str, list[str]]:
        names = self._current_dir._list_contents()
        if not a:
            names = [name for name in names if not name.startswith(".")]
        return {"current_directory_content": names}

    def cd(self, folder: str) -> dict[str, str] | None:
        folder = folder.rstrip("/")
        if folder == "":
            self._current_dir = self.root
            return {"current_working_directory": self.root.name}
        if folder == "..":
            if self._current_dir.parent is None:
                return {"error": "Current directory is already the root. Cannot go back."}
            self._current_dir = self._current_dir.parent
            return {}
        if "/" in folder:
            return {
                "error": f"cd: {folder}: Unsupported path. Only one folder level at a time is supported."
            }
        target = self._navigate_to_directory(folder)
        if isinstance(target, dict):
            return target
        self._current_dir = target
        return {"current_working_directory": target.name}

    def mkdir(self, dir_name: str) -> dict[str, str] | None:
        if not self._validate_file_or_directory_name(dir_name):
            return {"error": f"mkdir: cannot create directory '{dir_name}': Invalid character"}
        if dir_name in self._current_dir.contents:
            return {"error": f"mkdir: cannot create directory '{dir_name}': File exists"}
        self._current_dir._add_directory(dir_name)
        return None

    def touch(self, file_name: str) -> dict[str, str] | None:
        if not self._validate_file_or_directory_name(file_name):
            return {"error": f"touch: cannot touch '{file_name}': Invalid character"}
        if file_name in self._current_dir.contents:
            return {"error": f"touch: cannot touch '{file_name}': File exists"}
        self._current_dir._add_file(file_name)
        return None

    def echo(self, content: str, file_name: str | None = None) -> dict[str, str] | None:
        if file_name is not None and not self._validate_file_or_directory_name(file_name):
            return {"error": f"echo: cannot write to '{file_name}': Invalid character"}
        if not file_name:
            return {"terminal_output": content}
        target = self._lookup(file_name)
        if target is None:
            return {"error": f"echo: cannot write to '{file_name}': No such file"}
        target._write(content)  # a Directory has no _write: BFCL fails the same way
        return None

    def cat(self, file_name: str) -> dict[str, str]:
        if not self._validate_file_or_directory_name(file_name):
            return {"error": f"cat: '{file_name}': Invalid character"}
        item = self._lookup(file_name)
        if item is None:
            return {"error": f"cat: '{file_name}': No such file or directory"}
        if isinstance(item, Directory):
            return {"error": f"cat: '{file_name}': Is a directory"}
        return {"file_content": item._read()}

    def find(self, path: str = ".", name: str | None = None) -> dict[str, list[str]]:
        start = self._navigate_to_directory(path)
        if isinstance(start, dict):
            return {"error": f"find: '{path}': No such file or directory"}
        matches: list[str] = []
        # Iterative depth-first walk in listing order, so deep trees cannot hit the recursion limit.
        stack = [(start, path.rstrip("/"), iter(list(start.contents.items())))]
        while stack:
            _, prefix, items = stack[-1]
            entry = next(items, None)
            if entry is None:
                stack.pop()
                continue
            item_name, item = entry
            item_path = f"{prefix}/{item_name}"
            if name is None or name in item_name:
                matches.append(item_path)
            if isinstance(item, Directory):
                if any(item is open_dir for open_dir, _, _ in stack):
                    raise RecursionError(_ENDLESS_TREE)
                stack.append((item, item_path, iter(list(item.contents.items()))))
        return {"matches": matches}

    def wc(self, file_name: str, mode: str = "l") -> dict[str, int | str]:
        if mode not in ("l", "w", "c"):
            return {"error": f"wc: invalid mode '{mode}'"}
        item = self._file(file_name)
        if item is None:
            return {"error": f"wc: {file_name}: No such file or directory"}
        content = item._read()
        if mode == "l":
            return {"count": len(content.splitlines()), "type": "lines"}
        if mode == "w":
            return {"count": len(content.split()), "type": "words"}
        return {"count": len(content), "type": "characters"}

    def sort(self, file_name: str) -> dict[str, str]:
        item = self._file(file_name)
        if item is None:
            return {"error": f"sort: {file_name}: No such file or directory"}
        return {"sorted_content": "\n".join(sorted(item._read().splitlines()))}

    def grep(self, file_name: str, pattern: str) -> dict[str, list[str]]:
        item = self._file(file_name)
        if item is None:
            return {"error": f"grep: {file_name}: No such file or directory"}
        return {"matching_lines": [line for line in item._read().splitlines() if pattern in line]}

    def du(self, human_readable: bool = False) -> dict[str, str]:
        total = 0
        stack = [(self._current_dir, ())]
        while stack:
            directory, ancestors = stack.pop()
            if any(directory is ancestor for ancestor in ancestors):
                raise RecursionError(_ENDLESS_TREE)
            for item in directory.contents.values():
                if isinstance(item, File):
                    total += len(item.content.encode("utf-8"))
                else:
                    stack.append((item, ancestors + (directory,)))
        if human_readable:
            return {"disk_usage": _human_size(total)}
        return {"disk_usage": f"{total} bytes"}

    def tail(self, file_name: str, lines: int = 10) -> dict[str, str]:
        item = self._file(file_name)
        if item is None:
            return {"error": f"tail: {file_name}: No such file or directory"}
        content_lines = item._read().splitlines()
        lines = min(lines, len(content_lines))
        return {"last_lines": "\n".join(content_lines[-lines:])}

    def diff(self, file_name1: str, file_name2: str) -> dict[str, str]:
        contents = self._current_dir.contents
        if file_name1 not in contents or file_name2 not in contents:
            return {"error": f"diff: {file_name1} or {file_name2}: No such file or directory"}
        first, second = self._file(file_name1), self._file(file_name2)
        if first is None or second is None:
            return {"error": f"diff: {file_name1} or {file_name2}: No such file or directory"}
        # Line pairs in step; lines past the shorter file are not reported (as in BFCL).
        changes = [
            f"- {line1}\n+ {line2}"
            for line1, line2 in zip(first._read().splitlines(), second._read().splitlines())
            if line1 != line2
        ]
        return {"diff_lines": "\n".join(changes)}

    def mv(self, source: str, destination: str) -> dict[str, str]:
        if source not in self._current_dir.contents:
            return {"error": f"mv: cannot move '{source}': No such file or directory"}
        if "/" in destination:
            return {
                "error": "mv: path not allowed in destination. Provide only a file or directory name."
            }
        item = self._current_dir._get_item(source)
        if destination not in self._current_dir.contents:
            del self._current_dir.contents[source]
            self._current_dir.contents[destination] = self._moved(
                item, destination, self._current_dir
            )
            return {"result": f"'{source}' moved to '{destination}'"}
        # Note: "." as destination means the current directory itself, even if an entry named "." exists.
        target = self._current_dir._get_item(destination)
        if not isinstance(target, Directory):
            return {"error": f"mv: cannot move '{source}' to '{destination}': Not a directory"}
        if target._get_item(source) is not None:
            return {"error": f"mv: cannot move '{source}' to '{destination}/{source}': File exists"}
        del self._current_dir.contents[source]
        target.contents[source] = self._moved(item, source, target)
        return {"result": f"'{source}' moved to '{destination}/{source}'"}

    @staticmethod
    def _moved(item: File | Directory, name: str, parent: Directory) -> File | Directory:
        # BFCL moves by re-creating the entry: a new object that keeps the old contents dict,
        # so children still name the old directory as their parent.
        if isinstance(item, File):
            return File(name, item.content)
        moved = Directory(name, parent)
        moved.contents = item.contents
        return moved

    def rm(self, file_name: str) -> dict[str, str]:
        if file_name not in self._current_dir.contents:
            return {"error": f"rm: cannot remove '{file_name}': No such file or directory"}
        del self._current_dir.contents[file_name]
        return {"result": f"'{file_name}' removed"}

    def rmdir(self, dir_name: str) -> dict[str, str]:
        item = self._lookup(dir_name)
        if item is None:
            return {"error": f"rmdir: cannot remove '{dir_name}': No such file or directory"}
        if not isinstance(item, Directory):
            return {"error": f"rmdir: cannot remove '{dir_name}': Not a directory"}
        if item.contents:
            return {"error": f"rmdir: cannot remove '{dir_name}': Directory not empty"}
        del self._current_dir.contents[dir_name]
        return {"result": f"'{dir_name}' removed"}

    def cp(self, source: str, destination: str) -> dict[str, str]:
        if source not in self._current_dir.contents:
            return {"error": f"cp: cannot copy '{source}': No such file or directory"}
        if "/" in destination:
            return {
                "error": "cp: path not allowed in destination. Provide only a file or directory name."
            }
        item = self._current_dir._get_item(source)
        if destination not in self._current_dir.contents:
            self._copy_into(item, destination, self._current_dir)
            return {"result": f"'{source}' copied to '{destination}'"}
        target = self._current_dir._get_item(destination)
        if not isinstance(target, Directory):
            return {"error": f"cp: cannot copy '{source}' to '{destination}': Not a directory"}
        self._copy_into(item, source, target)
        return {"result": f"'{source}' copied to '{destination}/{source}'"}

    @staticmethod
    def _copy_into(item: File | Directory, name: str, target: Directory) -> None:
        if isinstance(item, File):
            target._add_file(name, item.content)
            return
        # BFCL's directory copy is shallow and made after the new entry is in place: the copy
        # shares the original's children (and holds itself when copied into its own source).
        target._add_directory(name)
        target.contents[name].contents = copy.copy(item.contents)
