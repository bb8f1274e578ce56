"""Delivering a reading list beyond the terminal and Zotero: the e-mail digest by SMTP (`mail.py`)."""
