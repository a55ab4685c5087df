// Written for perfmodel's classifier tests (no external source).
package org.perfmodel.testdata;

import java.io.FileOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.Arrays;

public class Spooler {
    private final byte[] buffer = new byte[8192];

    /** Sorts the pending record keys in place before they are spooled. */
    public void sortKeys(long[] keys) {
        Arrays.sort(keys);
    }

    /**
     * Streams the spool file to a remote collector over a plain socket, writing the
     * buffer in full blocks and flushing once at the end. The collector acknowledges
     * nothing; a closed connection surfaces as an exception from the socket's output
     * stream, which is passed on to the caller unchanged, together with the number of
     * blocks that were written before the failure, so that the caller can resume later.
     */
    public int ship(String host, int port, int blocks) throws IOException {
        try (Socket socket = new Socket(host, port)) {
            var out = socket.getOutputStream();
            for (int i = 0; i < blocks; i++) {
                out.write(buffer, 0, buffer.length);
            }
            out.flush();
            return blocks;
        }
    }

    public void spill(String path, int blocks) throws IOException {
        try (FileOutputStream out = new FileOutputStream(path)) {
            for (int i = 0; i < blocks; i++) {
                out.write(buffer);
            }
        }
    }

    /** Mixes the buffer bytes into a running 64-bit hash. */
    public long mix(long seed) {
        long h = seed;
        for (byte b : buffer) {
            h ^= b;
            h *= 0x100000001b3L;
        }
        return h;
    }
}
