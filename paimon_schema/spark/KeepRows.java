package io.paimonschema.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import org.apache.spark.sql.api.java.UDF2;
import org.roaringbitmap.RoaringBitmap;

/**
 * read_table's row filter: keep(file_size, row_index) is false for the rows a data file drops
 * (deleted by its deletion vector, or ruled out by its file indexes).
 *
 * <p>The payload, built on the driver by paimon_schema/spark/jvm_filter.py, is a sequence of
 * (file size: i64 LE, length: i32 LE, the dropped rows as a portable 32-bit RoaringBitmap of
 * that length), one per data file; files of one scan have distinct sizes, which Spark's Parquet
 * scan exposes per row as the constant _metadata.file_size. A task reads a file's rows in order,
 * so the filter expands the current file's bitmap into 64-bit words once and tests a bit per
 * row; files without an entry keep every row.
 */
public final class KeepRows implements UDF2<Long, Long, Boolean> {
  private static final long serialVersionUID = 1L;

  private final byte[] payload;
  private transient HashMap<Long, int[]> entries;   // file size -> {offset, length}
  private transient long currentSize = -1;
  private transient long[] current;

  public KeepRows(byte[] payload) {
    this.payload = payload;
  }

  @Override
  public Boolean call(Long size, Long row) {
    long s = size;
    if (s != currentSize || entries == null) {
      current = words(s);
      currentSize = s;
    }
    long r = row;
    long[] w = current;
    if (w == null) {
      return Boolean.TRUE;
    }
    int word = (int) (r >>> 6);
    return word >= w.length || ((w[word] >>> (r & 63)) & 1L) == 0;
  }

  private long[] words(long size) {
    if (entries == null) {
      entries = index(payload);
    }
    int[] at = entries.get(size);
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

  private static HashMap<Long, int[]> index(byte[] payload) {
    ByteBuffer in = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
    HashMap<Long, int[]> out = new HashMap<>();
    while (in.hasRemaining()) {
      long size = in.getLong();
      int length = in.getInt();
      out.put(size, new int[] {in.position(), length});
      in.position(in.position() + length);
    }
    return out;
  }
}
