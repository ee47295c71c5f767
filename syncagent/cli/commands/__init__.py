"""``syncagent blame --history``'s implementation, until its rewrite moves it into
``cli/blame/`` beside the rest of the command."""
