/*
 * Test input for perfmodel's corpus extraction (written for the tests).
 */
package com.example.io;

import java.io.FileInputStream;
import java.io.IOException;

/**
 * Reads fixed-size blocks from a file.
 */
public class BlockReader implements AutoCloseable {
    private final FileInputStream in;
    private int blocks;

    /** Opens {@code path} for reading. */
    public BlockReader(String path) throws IOException {
        this.in = new FileInputStream(path);
    }

    /**
     * Reads the next block into {@code buf}.
     *
     * <p>Blocks until at least one byte is available; see {@link java.io.FileInputStream#read}.
     *
     * @param buf the destination buffer
     * @return the number of bytes read, or -1 at end of file
     * @throws IOException if the read fails
     * @since 1.0
     */
    public int readBlock(byte[] buf) throws IOException {
        int n = in.read(buf, 0, buf.length);
        if (n > 0) {
            blocks++;
        }
        return n;
    }

    public int readBlock(byte[] buf, int off, int len) throws IOException {
        int total = 0;
        while (total < len) {
            int n = in.read(buf, off + total, len - total);
            if (n < 0) break;
            total += n;
        }
        return total;
    }

    /** Number of blocks read so far. */
    public int getBlocks() {
        return blocks;
    }

    public abstract static class Sink {
        abstract void accept(byte[] block);

        void drain(BlockReader reader) throws IOException {
            byte[] buf = new byte[4096];
            while (reader.readBlock(buf) > 0) {
                accept(buf);
            }
        }
    }

    Runnable closer() {
        return new Runnable() {
            @Override
            public void run() {
                try {
                    in.close();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }
        };
    }

    @Override
    public native void close() throws IOException;
}
