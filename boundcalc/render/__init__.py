"""What a result looks like: the result records and their text, LaTeX, Markdown, CSV, JSON and notebook
forms, and the file handling of --output.
"""
