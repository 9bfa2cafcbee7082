"""Layout pages and diagrams generated from formats/*.ksy, shipped as package data."""
