"""Writing to the Zotero desktop through its local API (Zotero 10 and later): authorization, the key kept per
Zotero-Server-ID, and a session with the calls `zotrec sync`'s plan needs (see session.py)."""
