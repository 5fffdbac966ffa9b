package dwarf

type funcIndex struct{}
