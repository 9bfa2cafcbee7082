"""Floor 4, queries over indexes: the predicate algebra (`predicate`), its evaluation over a
file-index container (`evaluate`), the WHERE grammar (`where`, and its Spark SQL dialect in
`sql`) and the row masks of deletion vectors and index results (`masks`)."""
