"""TwitterAPI: a toy social network (tweets, comments, retweets, follows) for one user.

Behaviour mirrors BFCL's class of the same name, learned by running it. One quirk is kept on
purpose, but scoped to the instance: BFCL's ``post_tweet`` stores its default ``tags`` and
``mentions`` lists themselves, so a later ``mention`` on such a tweet also shows up in every
tweet posted with the default. BFCL's leak is process-wide; ours is per instance, which is
the same for one fresh episode and keeps episodes independent.
"""

from __future__ import annotations

from typing import Any

from fcenv.backends.plain_data import plain_copy

_DEFAULT_STATE: dict[str, Any] = {
    "username": "john",
    "password": "john123",
    "authenticated": False,
    "tweets": {},
    "comments": {},
    "retweets": {},
    "following_list": ["alice", "bob"],
    "tweet_counter": 0,
}
# Identity markers for "argument left out"; never mutated, so the signature keeps showing [].
_UNSET_TAGS: list = []
_UNSET_MENTIONS: list = []


def _not_authenticated(action: str) -> dict[str, str]:
    return {"error": f"User not authenticated. Please authenticate before {action}."}


class TwitterAPI:
    def __init__(self):
        self._api_description = (
            "This tool belongs to the TwitterAPI, which provides core functionality for posting tweets, "
            "retweeting, commenting, and following users on Twitter."
        )
        self._default_tags: list = []
        self._default_mentions: list = []

    def _load_scenario(self, scenario: dict, long_context=False) -> None:
        defaults = plain_copy(_DEFAULT_STATE)
        for key, default in defaults.items():
            setattr(self, key, scenario.get(key, default))
        # Scenario files key tweets by strings; methods look them up by int.
        self.tweets = {int(key): tweet for key, tweet in self.tweets.items()}

    def authenticate_twitter(self, username: str, password: str) -> dict[str, bool]:
        if username == self.username and password == self.password:
            self.authenticated = True
            return {"authentication_status": True}
        return {"authentication_status": False}

    def posting_get_login_status(self) -> dict[str, str | bool]:
        return {"login_status": bool(self.authenticated)}

    def post_tweet(
        self, content: str, tags: list[str] = _UNSET_TAGS, mentions: list[str] = _UNSET_MENTIONS
    ) -> dict[str, int | str | list[str]]:
        if not self.authenticated:
            return _not_authenticated("posting")
        if tags is _UNSET_TAGS:
            tags = self._default_tags
        if mentions is _UNSET_MENTIONS:
            mentions = self._default_mentions
        tweet = {
            "id": self.tweet_counter,
            "username": self.username,
            "content": content,
            "tags": tags,
            "mentions": mentions,
        }
        self.tweets[self.tweet_counter] = tweet
        self.tweet_counter += 1
        return tweet

    def retweet(self, tweet_id: int) -> dict[str, str]:
        if not self.authenticated:
            return _not_authenticated("retweeting")
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        mine = self.retweets.setdefault(self.username, [])
        if tweet_id in mine:
            return {"retweet_status": "Already retweeted"}
        mine.append(tweet_id)
        return {"retweet_status": "Successfully retweeted"}

    def comment(self, tweet_id: int, comment_content: str) -> dict[str, str]:
        if not self.authenticated:
            return _not_authenticated("commenting")
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        self.comments.setdefault(tweet_id, []).append(
            {"username": self.username, "content": comment_content}
        )
        return {"comment_status": "Comment added successfully"}

    def mention(self, tweet_id: int, mentioned_usernames: list[str]) -> dict[str, str]:
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        self.tweets[tweet_id]["mentions"].extend(mentioned_usernames)
        return {"mention_status": "Users mentioned successfully"}

    def follow_user(self, username_to_follow: str) -> dict[str, bool]:
        if not self.authenticated:
            return _not_authenticated("following")
        if username_to_follow in self.following_list:
            return {"follow_status": False}
        self.following_list.append(username_to_follow)
        return {"follow_status": True}

    def list_all_following(self) -> dict[str, list[str]]:
        if not self.authenticated:
            return _not_authenticated("listing following")
        return {"following_list": self.following_list}

    def unfollow_user(self, username_to_unfollow: str) -> dict[str, bool]:
        if not self.authenticated:
            return _not_authenticated("unfollowing")
        if username_to_unfollow not in self.following_list:
            return {"unfollow_status": False}
        self.following_list.remove(username_to_unfollow)
        return {"unfollow_status": True}

    def get_tweet(self, tweet_id: int) -> dict[str, int | str | list[str]]:
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        return self.tweets[tweet_id]

    def get_user_tweets(self, username: str) -> list[dict[str, int | str | list[str]]]:
        return [tweet for tweet in self.tweets.values() if tweet["username"] == username]

    def search_tweets(self, keyword: str) -> list[dict[str, int | str | list[str]]]:
        # Content matches by substring, tags only as a whole tag (both case-insensitive).
        return [
            tweet
            for tweet in self.tweets.values()
            if keyword.lower() in tweet["content"].lower()
            or keyword.lower() in [tag.lower() for tag in tweet["tags"]]
        ]

    def get_tweet_comments(self, tweet_id: int) -> list[dict[str, str]]:
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        return self.comments.get(tweet_id, [])

    def get_user_stats(self, username: str) -> dict[str, int]:
        tweet_count = sum(1 for tweet in self.tweets.values() if tweet["username"] == username)
        following_count = len(self.following_list) if username == self.username else 0
        retweet_count = len(self.retweets.get(username, []))
        return {
            "tweet_count": tweet_count,
            "following_count": following_count,
            "retweet_count": retweet_count,
        }


def share_default_lists(*instances: TwitterAPI) -> None:
    """Give instances one pair of default ``tags``/``mentions`` lists, as BFCL's do.

    In BFCL these lists are the method's default arguments, shared by every instance in the
    process, so within one evaluation the model's and the ground truth's instances see each
    other's ``mention`` on a tweet posted with the defaults. A checker that wants BFCL's exact
    verdicts calls this on the two instances of an episode right after creating them.
    """
    if instances:
        for other in instances[1:]:
            other._default_tags = instances[0]._default_tags
            other._default_mentions = instances[0]._default_mentions
