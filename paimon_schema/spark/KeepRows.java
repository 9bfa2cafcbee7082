package io.paimonschema.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.Footer;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.execution.datasources.FileStatusCache;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;
import org.apache.spark.sql.execution.datasources.PartitionSpec$;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFooterReader;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.internal.SessionState;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.roaringbitmap.RoaringBitmap;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * read_table's row filter: keep(row_index) is false for the rows the current data file drops
 * (deleted by its deletion vector, or ruled out by its file indexes), and the driver-side
 * helpers that build a filtered scan in one py4j call ({@link #scan}, {@link #fileSchema}).
 *
 * <p>The payload, built on the driver by paimon_schema/spark/native.py, is a sequence of
 * (key length: i32 LE, the file's URI, bitmap length: i32 LE, the dropped rows as a portable
 * 32-bit RoaringBitmap), one for every data file of the scan (an empty bitmap where nothing
 * drops). {@link #scan} checks on the driver that the payload and the scan name the same files,
 * and a row of a file without an entry is an error, never kept: driver and executor would then
 * spell the file's key differently, and keeping its rows would return deleted ones silently.
 * The file a row comes from is the one Spark's file
 * scan is reading in this thread ({@code InputFileBlockHolder}, what input_file_name() reads:
 * set by the scan before a file's first row and the filter runs on the rows in that thread), so
 * the only column the filter reads is the row index, which the Parquet reader fills into the
 * column named ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME when the read schema has it
 * (without the per-row `_metadata` struct, a file-size or file-name key per row, or a second
 * argument to box). A task reads a file's rows in order, so the current file's bitmap is
 * expanded into 64-bit words once and a row costs one bit test.
 */
public final class KeepRows implements UDF1<Long, Boolean> {
  private static final long serialVersionUID = 1L;

  private final Words words;

  public KeepRows(byte[] payload) {
    this.words = new Words(payload);
  }

  @Override
  public Boolean call(Long row) {
    if (row == null) {
      throw new IllegalStateException("KeepRows: a row without its row index");
    }
    return words.keep(InputFileBlockHolder.getInputFilePath(), row);
  }

  /**
   * The Spark schema of a Parquet file as JSON: what `spark.read.parquet` infers (Spark's
   * own footer reading and conversion under the session's settings; every field nullable, as
   * a file source's relation has it), without the Spark job it runs to read the footer.
   */
  public static String fileSchema(SparkSession spark, String path) throws IOException {
    SessionState state = ((org.apache.spark.sql.classic.SparkSession) spark).sessionState();
    Configuration conf = state.newHadoopConf();
    Path file = new Path(path);
    Footer footer = new Footer(file, ParquetFooterReader.readFooter(
        HadoopInputFile.fromPath(file, conf), ParquetMetadataConverter.SKIP_ROW_GROUPS));
    return ParquetFileFormat.readSchemaFromFooter(
        footer, new ParquetToSparkSchemaConverter(state.conf())).toNullable().json();
  }

  /**
   * `spark.read.options(options).schema(schema).parquet(paths)` without the rows the payload
   * drops, then `selectExpr(selects)` (unless there are none): a read_table scan built with one
   * py4j call instead of hundreds. A payload must name exactly the paths ({@link Words#check}:
   * IllegalArgumentException otherwise, before any row is read); with one, the read schema
   * gains the row-index column (the files must not hold a column of that name: Spark refuses
   * it beside row indexes), which `selects` leave out. Given the files' sizes (8-byte LE longs, one per path: the manifests'), the scan
   * lists nothing: its file index is given the files' statuses ({@link #relation}). paths,
   * options (key, value, ...) and selects are strings as (length: i32 LE, UTF-8) each.
   */
  public static Dataset<Row> scan(SparkSession spark, String schemaJson, byte[] paths,
                                  byte[] options, byte[] selects, byte[] payload, byte[] sizes)
      throws IOException {
    StructType schema = (StructType) DataType.fromJson(schemaJson);
    String rowIndex = ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME();
    boolean filtered = payload.length > 0;
    if (filtered) {
      schema = schema.add(rowIndex, DataTypes.LongType, true);
    }
    List<String> settings = strings(options);
    Map<String, String> settingMap = new LinkedHashMap<>();
    for (int i = 0; i + 1 < settings.size(); i += 2) {
      settingMap.put(settings.get(i), settings.get(i + 1));
    }
    List<String> files = strings(paths);
    if (filtered) {
      Words.check(payload, files);
    }
    Dataset<Row> out;
    if (sizes.length == 8 * files.size()) {
      out = relation(spark, schema, files, sizes, settingMap);
    } else {
      out = spark.read().schema(schema).options(settingMap).parquet(files.toArray(new String[0]));
    }
    if (filtered) {
      out = out.where(functions.udf(new KeepRows(payload), DataTypes.BooleanType)
          .apply(functions.col(rowIndex)));
    }
    List<String> exprs = strings(selects);
    return exprs.isEmpty() ? out : out.selectExpr(exprs.toArray(new String[0]));
  }

  /**
   * What `spark.read.schema(schema).options(options).parquet(files)` builds (a Parquet
   * relation over an in-memory file index, no partition columns: each file's directory is its
   * own base path), but the index is handed the files' statuses instead of listing them:
   * Spark lists more than 32 paths with a Spark job (288 files: ~0.5 s on a quiet 2-core
   * machine, several seconds under load) and stats each one without.
   */
  static Dataset<Row> relation(SparkSession spark, StructType schema, List<String> files,
                               byte[] sizes, Map<String, String> options) throws IOException {
    org.apache.spark.sql.classic.SparkSession session = (org.apache.spark.sql.classic.SparkSession) spark;
    scala.collection.immutable.Map<String, String> settings =
        scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(options));
    Configuration conf = session.sessionState().newHadoopConfWithOptions(settings);
    ByteBuffer in = ByteBuffer.wrap(sizes).order(ByteOrder.LITTLE_ENDIAN);
    List<Path> roots = new ArrayList<>();
    HashMap<Path, FileStatus[]> statuses = new HashMap<>();
    for (String file : files) {
      Path path = new Path(file);
      Path qualified = path.getFileSystem(conf).makeQualified(path);
      roots.add(qualified);
      statuses.put(qualified, new FileStatus[] {new FileStatus(in.getLong(), false, 1, 0, 0, qualified)});
    }
    FileStatusCache known = new FileStatusCache() {
      @Override
      public Option<FileStatus[]> getLeafFiles(Path path) {
        return Option.apply(statuses.get(path));
      }

      @Override
      public void putLeafFiles(Path path, FileStatus[] leafFiles) {
      }

      @Override
      public void invalidateAll() {
      }
    };
    InMemoryFileIndex index = new InMemoryFileIndex(session,
        CollectionConverters.asScala(roots).toSeq(), settings, Option.apply(schema), known,
        Option.apply(PartitionSpec$.MODULE$.emptySpec()), Option.empty());
    return session.baseRelationToDataFrame(new HadoopFsRelation(index, new StructType(), schema,
        Option.empty(), new ParquetFileFormat(), settings, session));
  }

  /** Strings as (length: i32 LE, UTF-8) each; null is none. */
  static List<String> strings(byte[] packed) {
    List<String> out = new ArrayList<>();
    if (packed == null) {
      return out;
    }
    ByteBuffer in = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
    while (in.hasRemaining()) {
      int length = in.getInt();
      out.add(new String(packed, in.position(), length, StandardCharsets.UTF_8));
      in.position(in.position() + length);
    }
    return out;
  }

  /**
   * A file's key: its URI's authority and path, decoded, so that the driver's URI
   * (file:///d/f) and the scan's (file:/d/f, percent-encoded) give the same key.
   */
  static String key(URI uri) {
    String authority = uri.getAuthority();
    return (authority == null ? "" : authority) + new Path(uri).toUri().getPath();
  }

  /** The payload's bitmaps by file, and the current file's words. */
  static final class Words implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    private final byte[] payload;
    private transient HashMap<String, int[]> entries;   // key -> {offset, length}
    private transient UTF8String currentFile;
    private transient long[] current;

    Words(byte[] payload) {
      this.payload = payload;
    }

    boolean keep(UTF8String file, long row) {
      if (file != currentFile) {          // the scan sets a new string per file (or split)
        if (!file.equals(currentFile)) {
          current = load(file);
        }
        currentFile = file;
      }
      long[] w = current;
      long word = row >>> 6;
      return word >= w.length || ((w[(int) word] >>> (row & 63)) & 1L) == 0;
    }

    private long[] load(UTF8String file) {
      if (file.numBytes() == 0) {         // no file scan in this thread: refuse to guess
        throw new IllegalStateException("KeepRows: no input file for this row (the filter must "
            + "run in the thread of the Parquet scan it was built on)");
      }
      if (entries == null) {
        entries = index(payload);
      }
      String key = key(URI.create(file.toString()));
      int[] at = entries.get(key);
      if (at == null) {
        throw new IllegalStateException("KeepRows: the scan read " + file + ", whose key " + key
            + " is not among the payload's " + entries.size() + " files (the driver names "
            + "every file of the scan): driver and executor spell the file differently");
      }
      RoaringBitmap dropped = new RoaringBitmap();
      try {
        dropped.deserialize(ByteBuffer.wrap(payload, at[0], at[1]).slice());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      long[] out = new long[dropped.isEmpty() ? 0
          : (int) ((Integer.toUnsignedLong(dropped.last()) >>> 6) + 1)];
      dropped.forEach((int i) -> out[i >>> 6] |= 1L << (i & 63));
      return out;
    }

    /**
     * On the driver: the payload has an entry for every file of the scan and none for another
     * file, else IllegalArgumentException naming the first key found on one side only.
     */
    static void check(byte[] payload, List<String> files) {
      HashMap<String, int[]> entries = index(payload);
      HashSet<String> scanned = new HashSet<>();
      for (String file : files) {
        String key = key(new Path(file).toUri());
        scanned.add(key);
        if (!entries.containsKey(key)) {
          throw new IllegalArgumentException("KeepRows: the payload has no entry for the scan's "
              + "file " + file + " (key " + key + "); every file of a filtered scan needs one");
        }
      }
      for (String key : entries.keySet()) {
        if (!scanned.contains(key)) {
          throw new IllegalArgumentException("KeepRows: the payload's file key " + key
              + " is not among the scan's " + files.size() + " files");
        }
      }
    }

    private static HashMap<String, int[]> index(byte[] payload) {
      ByteBuffer in = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
      HashMap<String, int[]> out = new HashMap<>();
      while (in.hasRemaining()) {
        int keyLength = in.getInt();
        String uri = new String(payload, in.position(), keyLength, StandardCharsets.UTF_8);
        in.position(in.position() + keyLength);
        int length = in.getInt();
        out.put(key(new Path(uri).toUri()), new int[] {in.position(), length});
        in.position(in.position() + length);
      }
      return out;
    }
  }
}
