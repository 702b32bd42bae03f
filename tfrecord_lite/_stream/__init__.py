"""Scanning a byte stream into records, and what to do with damage."""
