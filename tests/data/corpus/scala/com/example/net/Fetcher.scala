// Test input for perfmodel's corpus extraction (written for the tests).
package com.example
package net

import java.net.Socket

/** Fetches blocks from a remote [[BlockServer]] over a `Socket`.
  *
  * @param host the server host
  * @since 2.0
  */
class Fetcher(host: String, port: Int) {
  private val socket = new Socket(host, port)

  /** Reads ''exactly'' `n` bytes from the socket.
    *
    * {{{
    * val bytes = fetcher.fetch(10)
    * }}}
    * @param n how many bytes
    * @return the bytes read
    */
  def fetch(n: Int): Array[Byte] = {
    val buf = new Array[Byte](n)
    var off = 0
    while (off < n) {
      val r = socket.getInputStream.read(buf, off, n - off)
      if (r < 0) throw new java.io.EOFException()
      off += r
    }
    buf
  }

  def host_ : String = host

  def close(): Unit
}

object Fetcher {
  /** Opens a fetcher to `host`. */
  def connect(host: String, port: Int): Fetcher = {
    val f = new Fetcher(host, port)
    f.fetch(0)
    f
  }
}
