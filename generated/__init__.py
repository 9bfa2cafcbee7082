"""Code generated from formats/*.ksy by tools/generate.py; never edited by hand."""
