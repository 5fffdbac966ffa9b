package ui

// jumpList is vim's jump list over moments: each jump (an origin stop)
// remembers the moment it left, Back returns along them and Forward goes
// again where Back came from. Moments are the strings `goto` accepts.
type jumpList struct {
	moments []string
	// pos is the entry Back returned to; len(moments) when the session is
	// past the newest entry (after a jump, or a motion of its own).
	pos int
}

// jumpMax bounds the list; the oldest entries go first.
const jumpMax = 100

// Push records the moment a jump leaves. The entries after the current
// one (those Forward would reach) are dropped, as vim does.
func (j *jumpList) Push(from string) {
	j.moments = j.moments[:min(j.pos, len(j.moments))]
	if n := len(j.moments); n == 0 || j.moments[n-1] != from {
		j.moments = append(j.moments, from)
	}
	if len(j.moments) > jumpMax {
		j.moments = j.moments[len(j.moments)-jumpMax:]
	}
	j.pos = len(j.moments)
}

// Back returns the moment to go back to from now (false: none). Leaving
// the newest position records it, so that Forward can return to it.
func (j *jumpList) Back(now string) (string, bool) {
	if j.pos >= len(j.moments) {
		if n := len(j.moments); n > 0 && j.moments[n-1] != now {
			j.moments = append(j.moments, now)
		}
		j.pos = len(j.moments) - 1
	}
	for j.pos > 0 {
		j.pos--
		if j.moments[j.pos] != now {
			return j.moments[j.pos], true
		}
	}
	return "", false
}

// Forward returns the moment Back came from (false: none).
func (j *jumpList) Forward() (string, bool) {
	if j.pos+1 >= len(j.moments) {
		return "", false
	}
	j.pos++
	return j.moments[j.pos], true
}
