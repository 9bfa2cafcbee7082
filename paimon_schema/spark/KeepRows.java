package io.paimonschema.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import org.apache.spark.sql.api.java.UDF2;
import org.roaringbitmap.RoaringBitmap;

/**
 * read_table's row filter: keep(file, row_index) is false for the rows a data file drops
 * (deleted by its deletion vector, or ruled out by its file indexes).
 *
 * <p>The payload, built on the driver by paimon_schema/spark/native.py, is a sequence of
 * (key length: i32 LE, key, bitmap length: i32 LE, the dropped rows as a portable 32-bit
 * RoaringBitmap), one per data file. The key is the file's size (8 bytes LE; Spark's Parquet
 * scan gives _metadata.file_size as a per-file constant, cheap per row) when the files of the
 * scan have distinct sizes, else its name (_metadata.file_name, a string per row: ByName). A
 * task reads a file's rows in order, so the current file's bitmap is expanded into 64-bit words
 * once and a row costs one bit test; files without an entry keep every row.
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
