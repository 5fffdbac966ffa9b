module github.com/rewind-debugger/rewind

go 1.26.0

require (
	github.com/go-delve/delve v1.27.2 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/arch v0.32.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
