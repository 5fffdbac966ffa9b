// Package gdbserver serves a recording to gdb over the remote serial
// protocol, the way rr's gdb server does: gdb reads registers and memory
// of the replay, inserts breakpoints and watchpoints, and runs it forwards
// and backwards (bc, bs), with the ends of the recording reported as the
// ends of the reverse-execution history.
package gdbserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxPacket is the largest packet the server accepts and announces
// (qSupported's PacketSize): gdb sizes its memory reads and writes by it.
const MaxPacket = 0x4000

// interrupt is the byte gdb sends, outside any packet, to stop a running
// target (Ctrl-C).
const interrupt = 0x03

// errTooLong says a packet went past MaxPacket before its end.
var errTooLong = errors.New("packet too long")

// errChecksum says a packet's checksum did not match its contents.
var errChecksum = errors.New("bad checksum")

// frame is one unit the reader sees on the wire.
type frame struct {
	data      string // the packet's payload (unescaped, run lengths expanded)
	interrupt bool   // a 0x03 between packets
	err       error  // errChecksum or errTooLong: the packet is dropped
}

// reader splits the byte stream from gdb into packets and interrupts.
// Acknowledgements ('+', '-') and bytes outside packets are skipped: gdb
// retransmits what it does not see acknowledged, and garbage on the line
// must not stop the server.
type reader struct {
	r *bufio.Reader
}

func newReader(r io.Reader) *reader { return &reader{r: bufio.NewReader(r)} }

// next returns the next frame, or an error when the stream ends.
func (p *reader) next() (frame, error) {
	for {
		c, err := p.r.ReadByte()
		if err != nil {
			return frame{}, err
		}
		switch c {
		case interrupt:
			return frame{interrupt: true}, nil
		case '$':
			return p.packet()
		}
	}
}

// packet reads a packet after its '$': the payload, '#', two hex digits.
func (p *reader) packet() (frame, error) {
	var b strings.Builder
	var sum byte
	tooLong := false
	for {
		c, err := p.r.ReadByte()
		if err != nil {
			return frame{}, err
		}
		if c == '#' {
			break
		}
		if c == '$' {
			// A new packet starts before this one ended: this one was
			// cut, the new one may be whole.
			b.Reset()
			sum, tooLong = 0, false
			continue
		}
		sum += c
		if b.Len() >= MaxPacket {
			tooLong = true
			continue
		}
		b.WriteByte(c)
	}
	var hex [2]byte
	if _, err := io.ReadFull(p.r, hex[:]); err != nil {
		return frame{}, err
	}
	want, ok := parseHexByte(hex[0], hex[1])
	switch {
	case tooLong:
		return frame{err: errTooLong}, nil
	case !ok || want != sum:
		return frame{err: errChecksum}, nil
	}
	data, err := decodePayload(b.String())
	if err != nil {
		return frame{err: err}, nil
	}
	return frame{data: data}, nil
}

// decodePayload undoes the escapes ('}' then the byte xor 0x20) and run
// lengths ('*' then the count + 29) of a packet's payload.
func decodePayload(s string) (string, error) {
	if !strings.ContainsAny(s, "}*") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '}':
			if i+1 >= len(s) {
				return "", errors.New("escape at the end of a packet")
			}
			i++
			b.WriteByte(s[i] ^ 0x20)
		case '*':
			if i+1 >= len(s) || b.Len() == 0 {
				return "", errors.New("bad run length")
			}
			i++
			n := int(s[i]) - 29
			if n < 0 || b.Len()+n > MaxPacket {
				return "", errors.New("bad run length")
			}
			last := b.String()[b.Len()-1]
			for range n {
				b.WriteByte(last)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// parseHexByte reads two hex digits.
func parseHexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexDigit(hi)
	l, ok2 := hexDigit(lo)
	return h<<4 | l, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// encodePacket frames a reply: '$', the payload with the protocol's special
// bytes escaped, '#', the checksum.
func encodePacket(payload string) []byte {
	out := make([]byte, 0, len(payload)+4)
	out = append(out, '$')
	var sum byte
	for i := 0; i < len(payload); i++ {
		c := payload[i]
		if c == '$' || c == '#' || c == '}' || c == '*' {
			out = append(out, '}')
			sum += '}'
			c ^= 0x20
		}
		out = append(out, c)
		sum += c
	}
	return fmt.Appendf(out, "#%02x", sum)
}
