"""Floor 1, the values every other floor speaks: errors, data types, row positions, index options
and predicate results. Nothing here knows a byte layout."""
