// Package main is a large Go binary (about 20 MB with DWARF) for the
// symbol-loading benchmark: it links much of the standard library.
package main

import (
	"archive/zip"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"html/template"
	"image/png"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/smtp"
	"os"
	"regexp"
	"runtime/pprof"
	"text/tabwriter"
)

func main() {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", "package x\nfunc F() int { return 1 }", 0)
	if err != nil {
		panic(err)
	}
	conf := types.Config{}
	_, _ = conf.Check("x", fset, []*ast.File{f}, nil)
	var buf []byte
	buf, _ = format.Source([]byte("package x"))
	_ = zip.NewWriter(os.Stdout)
	_, _ = gzip.NewReader(os.Stdin)
	_ = &tls.Config{}
	_ = x509.NewCertPool()
	_ = sql.Drivers()
	_, _ = json.Marshal(buf)
	_, _ = xml.Marshal(buf)
	_ = template.New("x")
	_ = png.Encoder{}
	_ = big.NewInt(1)
	_ = httptest.NewRecorder()
	_ = http.DefaultClient
	_, _ = mail.ParseAddress("a@b.c")
	_ = smtp.PlainAuth
	_ = regexp.MustCompile("x")
	_ = pprof.Profiles()
	_ = tabwriter.NewWriter(os.Stdout, 0, 0, 0, ' ', 0)
	fmt.Println(len(buf))
}
