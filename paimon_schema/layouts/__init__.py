"""Floor 3, one module or package per formats/*.ksy: logical models, read and written through
the generated code (the only floor that imports `generated/`); `registry` opens and builds the
four file indexes by Paimon's type names."""
