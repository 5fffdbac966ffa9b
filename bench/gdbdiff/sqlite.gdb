break sqlite3BtreeInsert
ignore 1 3
run
bt
info args
print *pCur
print pX->nKey
print pX->pKey
finish
delete
break sqlite3_column_double
ignore 2 5
continue
bt
info args
info breakpoints
finish
next
next
info locals
print sum
print rows
print *sel
step
bt
info frame
up
info frame
down
finish
finish
delete
break sqlite3VdbeExec
continue
bt 3
info args
print p->nOp
print *p->aOp
print p->aOp[1]
ptype p
whatis p->db
print p->db->aDb[0]
x/4i $pc
info line *$pc
