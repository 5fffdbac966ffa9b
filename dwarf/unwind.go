package dwarf

// cfiTables is replaced by the CFI unwinder.
type cfiTables struct{}
