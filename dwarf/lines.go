package dwarf

type lineTable struct{}
