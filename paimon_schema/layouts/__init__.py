"""One module per formats/*.ksy: logical models, read (and later write) through generated code."""
