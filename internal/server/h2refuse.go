package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
)

// A connection refused past the connection cap may be a gRPC client,
// which speaks HTTP/2 from its first byte and reads an HTTP/1.1 answer as
// a malformed frame ("frame too large"). It is answered in HTTP/2
// instead: the server's SETTINGS, an acknowledgement of the client's,
// then, on the client's first stream, a Trailers-Only response with
// grpc-status UNAVAILABLE (14) and the reason, and GOAWAY — what a gRPC
// server answers when it cannot take a call.

// HTTP/2 frame types and flags used here (RFC 9113 §6).
const (
	h2FrameHeaders  = 0x1
	h2FrameSettings = 0x4
	h2FrameGoAway   = 0x7
	h2FlagAck       = 0x1
	h2FlagEndStream = 0x1
	h2FlagEndHeader = 0x4
	// h2MaxRefusalFrames bounds the frames read before the client's
	// first HEADERS; h2MaxFrame the size of one (the default
	// SETTINGS_MAX_FRAME_SIZE).
	h2MaxRefusalFrames = 16
	h2MaxFrame         = 16384
)

// readStart reads a connection's first bytes up to the length of the
// HTTP/2 preface, stopping as soon as they differ from it; h2 reports
// whether they are the whole preface.
func readStart(c net.Conn) (start []byte, h2 bool) {
	var buf [24]byte // len(h2Preface)
	n := 0
	for n < len(buf) {
		k, err := c.Read(buf[n:])
		if !bytes.Equal(buf[n:n+k], h2Preface[n:n+k]) {
			return buf[:n+k], false
		}
		n += k
		if err != nil {
			return buf[:n], false
		}
	}
	return buf[:n], true
}

// refuseH2 answers the HTTP/2 connection c, whose preface was read, with
// a gRPC status UNAVAILABLE carrying msg on its first stream.
func refuseH2(c net.Conn, msg string) {
	_ = writeFrame(c, h2FrameSettings, 0, 0, nil)
	var head [9]byte
	for range h2MaxRefusalFrames {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		length := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
		typ, flags := head[3], head[4]
		stream := binary.BigEndian.Uint32(head[5:]) & 0x7fffffff
		if length > h2MaxFrame {
			return
		}
		if _, err := io.CopyN(io.Discard, c, int64(length)); err != nil {
			return
		}
		switch {
		case typ == h2FrameSettings && flags&h2FlagAck == 0:
			if writeFrame(c, h2FrameSettings, h2FlagAck, 0, nil) != nil {
				return
			}
		case typ == h2FrameHeaders && stream != 0:
			var block []byte
			for _, f := range [][2]string{
				{":status", "200"},
				{"content-type", "application/grpc"},
				{"grpc-status", "14"},
				{"grpc-message", grpcPercentEncode(msg)},
			} {
				block = hpackLiteral(block, f[0], f[1])
			}
			if writeFrame(c, h2FrameHeaders, h2FlagEndStream|h2FlagEndHeader, stream, block) != nil {
				return
			}
			var goAway [8]byte
			binary.BigEndian.PutUint32(goAway[:4], stream) // NO_ERROR
			_ = writeFrame(c, h2FrameGoAway, 0, 0, goAway[:])
			return
		}
	}
}

// writeFrame writes one HTTP/2 frame.
func writeFrame(c net.Conn, typ, flags byte, stream uint32, payload []byte) error {
	f := make([]byte, 9, 9+len(payload))
	f[0], f[1], f[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	f[3], f[4] = typ, flags
	binary.BigEndian.PutUint32(f[5:], stream)
	_, err := c.Write(append(f, payload...))
	return err
}

// hpackLiteral appends a header field as an HPACK literal without
// indexing, with a literal name and no Huffman coding (RFC 7541 §6.2.2).
func hpackLiteral(b []byte, name, value string) []byte {
	b = append(b, 0)
	b = hpackString(b, name)
	return hpackString(b, value)
}

// hpackString appends a string literal: its length as an integer with a
// 7-bit prefix (RFC 7541 §5.1), then its bytes.
func hpackString(b []byte, s string) []byte {
	n := len(s)
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		for n -= 127; n >= 128; n >>= 7 {
			b = append(b, byte(n%128)|0x80)
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// grpcPercentEncode encodes a grpc-message value: bytes outside printable
// ASCII, and '%', as %XX.
func grpcPercentEncode(s string) string {
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
