# The assistant's conversations live here (see the assistant issue).
