"""Records in files: the streaming reader, random access, the writer, counting, verifying, salvage."""
