package syscalls

// The kernel key management calls: add_key and request_key return a key's
// serial number; keyctl's reading operations copy into a buffer of the
// caller. Keys live in the kernel, so replay only needs these results.

// keyctl operations that write into the caller's memory (linux/keyctl.h).
const (
	keyctlDescribe    = 6
	keyctlRead        = 11
	keyctlGetSecurity = 17
	keyctlDHCompute   = 23
	keyctlPkeyQuery   = 24
	keyctlPkeyEncrypt = 25
	keyctlPkeyDecrypt = 26
	keyctlPkeySign    = 27
	keyctlCaps        = 31

	keyctlPkeyQuerySize = 56 // struct keyctl_pkey_query
)

// keyctlOut: DESCRIBE, READ and GET_SECURITY return the full size and copy
// at most buflen bytes into the buffer (argument 2, buflen in 3), as does
// DH_COMPUTE; CAPABILITIES has its buffer in argument 1; PKEY_QUERY fills a
// struct at argument 4; PKEY_ENCRYPT, DECRYPT and SIGN write the returned
// number of bytes at argument 4.
func keyctlOut(c *Call, _ Memory) ([]Range, error) {
	if c.Ret < 0 {
		return nil, nil
	}
	switch uint32(c.Args[0]) {
	case keyctlDescribe, keyctlRead, keyctlGetSecurity, keyctlDHCompute:
		return span(c.Args[2], min(uint64(c.Ret), c.Args[3])), nil
	case keyctlCaps:
		return span(c.Args[1], min(uint64(c.Ret), c.Args[2])), nil
	case keyctlPkeyQuery:
		return span(c.Args[4], keyctlPkeyQuerySize), nil
	case keyctlPkeyEncrypt, keyctlPkeyDecrypt, keyctlPkeySign:
		return span(c.Args[4], uint64(c.Ret)), nil
	}
	return nil, nil
}
