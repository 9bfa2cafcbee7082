package io.paimonschema.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.Footer;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFooterReader;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.internal.SessionState;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.roaringbitmap.RoaringBitmap;

/**
 * read_table's row filter: keep(file, row_index) is false for the rows a data file drops
 * (deleted by its deletion vector, or ruled out by its file indexes), and the driver-side
 * helpers that build a filtered scan in one py4j call ({@link #scan}, {@link #fileSchema}).
 *
 * <p>The payload, built on the driver by paimon_schema/spark/native.py, is a sequence of
 * (key length: i32 LE, key, bitmap length: i32 LE, the dropped rows as a portable 32-bit
 * RoaringBitmap), one per data file. The key is the file's size (8 bytes LE; Spark's Parquet
 * scan gives _metadata.file_size as a per-file constant, cheap per row) when no other file of
 * the scan has that size, else its name (_metadata.file_name, a string per row: ByName).
 * A task reads a file's rows in order, so the current file's bitmap is expanded into 64-bit
 * words once and a row costs one bit test; files without an entry keep every row.
 */
public final class KeepRows implements UDF2<Long, Long, Boolean> {
  private static final long serialVersionUID = 1L;

  private final Words words;

  public KeepRows(byte[] payload) {
    this.words = new Words(payload);
  }

  @Override
  public Boolean call(Long size, Long row) {
    return words.keep((long) size, (long) row);
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
   * `spark.read.options(options).schema(schema).parquet(paths)` without the rows the payloads
   * drop, then `selectExpr(selects)` (unless there are none): a read_table scan built with one
   * py4j call instead of hundreds. bySize is keyed by file size, byName by file name, for the
   * files whose size is one of sharedSizes (8-byte LE longs); the name is only read for rows
   * of those files. paths, options (key, value, ...) and selects are strings as (length: i32
   * LE, UTF-8) each.
   */
  public static Dataset<Row> scan(SparkSession spark, String schemaJson, byte[] paths,
                                  byte[] options, byte[] selects, byte[] bySize, byte[] byName,
                                  byte[] sharedSizes) {
    DataFrameReader reader = spark.read().schema((StructType) DataType.fromJson(schemaJson));
    List<String> settings = strings(options);
    for (int i = 0; i + 1 < settings.size(); i += 2) {
      reader = reader.option(settings.get(i), settings.get(i + 1));
    }
    Dataset<Row> out = reader.parquet(strings(paths).toArray(new String[0]));
    if (bySize.length > 0 || byName.length > 0) {
      out = out.where(keep(bySize, byName, sharedSizes));
    }
    List<String> exprs = strings(selects);
    return exprs.isEmpty() ? out : out.selectExpr(exprs.toArray(new String[0]));
  }

  /** The filter Column over the scan's metadata columns. */
  static Column keep(byte[] bySize, byte[] byName, byte[] sharedSizes) {
    Column row = functions.col("_metadata.row_index");
    Column size = functions.col("_metadata.file_size");
    Column sized = udf(new KeepRows(bySize), size, row);
    if (sharedSizes.length == 0) {
      return sized;
    }
    ByteBuffer in = ByteBuffer.wrap(sharedSizes).order(ByteOrder.LITTLE_ENDIAN);
    Object[] shared = new Object[sharedSizes.length / 8];
    for (int i = 0; i < shared.length; i++) {
      shared[i] = in.getLong();
    }
    Column named = udf(new ByName(byName), functions.col("_metadata.file_name"), row);
    return functions.when(size.isin(shared), named).otherwise(sized);
  }

  private static Column udf(UDF2<?, ?, Boolean> keep, Column key, Column row) {
    return functions.udf(keep, DataTypes.BooleanType).apply(key, row);
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

  /** The same filter keyed by file name. */
  public static final class ByName implements UDF2<String, Long, Boolean> {
    private static final long serialVersionUID = 1L;

    private final Words words;

    public ByName(byte[] payload) {
      this.words = new Words(payload);
    }

    @Override
    public Boolean call(String name, Long row) {
      return words.keep(name, row);
    }
  }

  /** The payload's bitmaps by key, and the current file's words. */
  static final class Words implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    private final byte[] payload;
    private transient HashMap<Object, int[]> entries;   // key -> {offset, length}
    private transient Object currentKey;
    private transient long[] current;

    Words(byte[] payload) {
      this.payload = payload;
    }

    boolean keep(long size, long row) {
      if (!(currentKey instanceof Long) || (Long) currentKey != size) {
        current = load(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, size));
        currentKey = size;
      }
      return test(row);
    }

    boolean keep(String name, long row) {
      if (!name.equals(currentKey)) {
        current = load(ByteBuffer.wrap(name.getBytes(StandardCharsets.UTF_8)));
        currentKey = name;
      }
      return test(row);
    }

    private boolean test(long row) {
      long[] w = current;
      if (w == null) {
        return true;
      }
      long word = row >>> 6;
      return word >= w.length || ((w[(int) word] >>> (row & 63)) & 1L) == 0;
    }

    private long[] load(ByteBuffer key) {
      if (entries == null) {
        entries = index(payload);
      }
      int[] at = entries.get(key);
      if (at == null) {
        return null;
      }
      RoaringBitmap dropped = new RoaringBitmap();
      try {
        dropped.deserialize(ByteBuffer.wrap(payload, at[0], at[1]).slice());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (dropped.isEmpty()) {
        return null;
      }
      long[] out = new long[(int) ((Integer.toUnsignedLong(dropped.last()) >>> 6) + 1)];
      dropped.forEach((int i) -> out[i >>> 6] |= 1L << (i & 63));
      return out;
    }

    private static HashMap<Object, int[]> index(byte[] payload) {
      ByteBuffer in = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
      HashMap<Object, int[]> out = new HashMap<>();
      while (in.hasRemaining()) {
        int keyLength = in.getInt();
        ByteBuffer key = ByteBuffer.wrap(payload, in.position(), keyLength).slice();
        in.position(in.position() + keyLength);
        int length = in.getInt();
        out.put(key, new int[] {in.position(), length});
        in.position(in.position() + length);
      }
      return out;
    }
  }
}
