"""Checks that a list of messages is a valid Messages API conversation."""


def messages_problems(messages: list[dict]) -> list[str]:
    """Why these messages would be refused as a request's history (empty when valid)."""
    problems = []
    if not messages:
        return ["no messages"]
    if messages[0]["role"] != "user":
        problems.append("the first message is not from the user")
    if messages[-1]["role"] != "user":
        problems.append("the last message is not from the user")
    pending: set[str] = set()
    for index, message in enumerate(messages):
        if index and message["role"] == messages[index - 1]["role"]:
            problems.append(f"message {index} repeats role {message['role']}")
        blocks = message["content"]
        if not blocks:
            problems.append(f"message {index} is empty")
        if message["role"] == "user":
            answered = {block["tool_use_id"] for block in blocks if block.get("type") == "tool_result"}
            if answered != pending:
                problems.append(
                    f"message {index} answers {sorted(answered)} but {sorted(pending)} were asked"
                )
            pending = set()
        else:
            if pending:
                problems.append(f"message {index} follows unanswered tool calls")
            pending = {block["id"] for block in blocks if block.get("type") == "tool_use"}
    if pending:
        problems.append("tool calls left unanswered at the end")
    return problems
