"""The self-check wing: the Java reference harness (`reference`), the `demo` comparing this
library with Java, and the Spark `pipeline`. The library never imports it; the CLI reaches
`demo` and `pipeline` only inside their subcommands."""
