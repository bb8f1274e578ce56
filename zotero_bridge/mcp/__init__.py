"""`zotrec mcp`: zotrec's tools for an AI assistant over the Model Context Protocol (stdio, the official SDK):
what each tool answers (`tools.py`, from the one ranking the command wires in) and the server (`server.py`)."""
