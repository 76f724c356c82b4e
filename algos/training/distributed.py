"""Several processes, one replica each: gradients averaged, scalars added up, replicas checked.

Under ``accelerate launch`` or ``torchrun`` every process holds the whole policy, plays its own
environments and updates on its own buffer; ``reduce_mean`` averages gradients and whitening
moments so the replicas stay identical, and ``merge`` adds up the logged sums. With one process
every helper is the identity.
"""

from __future__ import annotations

from typing import Any

import torch


class Processes:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.rank = accelerator.process_index
        self.world = accelerator.num_processes
        self.is_main = accelerator.is_main_process

    def reduce_mean(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.world == 1:
            return tensor
        return self.accelerator.reduce(tensor, reduction="mean")

    def merge(self, sums: dict[str, float]) -> dict[str, float]:
        """Add up per-process sums (keys may differ between processes)."""
        if self.world == 1:
            return sums
        from accelerate.utils import gather_object

        merged: dict[str, float] = {}
        for part in gather_object([sums]):
            for key, value in part.items():
                merged[key] = merged.get(key, 0.0) + value
        return merged

    def broadcast(self, value: Any) -> Any:
        """The main process's ``value``, on every process."""
        if self.world == 1:
            return value
        from accelerate.utils import broadcast_object_list

        holder = [value]
        broadcast_object_list(holder)
        return holder[0]

    def check_replicas(self, parameters: list[torch.nn.Parameter]) -> None:
        """Every process must hold the same weights; a checksum per process says so."""
        if self.world == 1:
            return
        from accelerate.utils import gather_object

        with torch.no_grad():
            local = sum(float(p.double().sum()) for p in parameters)
        sums = gather_object([local])
        if len(set(sums)) != 1:
            raise RuntimeError(f"the process replicas have diverged (parameter checksums {sums})")

    def wait(self) -> None:
        self.accelerator.wait_for_everyone()


def has_accelerator() -> bool:
    probe = getattr(torch, "accelerator", None)
    return bool(probe.is_available()) if probe is not None else torch.cuda.is_available()
