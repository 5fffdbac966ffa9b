package cli

import "testing"

func TestGoTestHint(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		goflags string
		want    bool
	}{
		{"go test", []string{"go", "test", "./pkg"}, "", true},
		{"full path, -run", []string{"/usr/local/go/bin/go", "test", "-run", "TestX", "./pkg"}, "", true},
		{"flags before the subcommand", []string{"go", "-C", "dir", "test"}, "", false}, // -C takes a value: "dir" is not a subcommand
		{"symbols kept", []string{"go", "test", "-ldflags=-s=false -w=false", "./pkg"}, "", false},
		{"symbols kept by GOFLAGS", []string{"go", "test", "./pkg"}, "-ldflags=-w=false", false},
		{"test binary only built", []string{"go", "test", "-c", "./pkg"}, "", false},
		{"test binary written with -o", []string{"go", "test", "-o=t.test", "./pkg"}, "", false},
		{"-count and -cover are not -c", []string{"go", "test", "-count=1", "-cover", "./pkg"}, "", true},
		{"-overlay is not -o", []string{"go", "test", "-overlay=o.json", "./pkg"}, "", true},
		{"go build", []string{"go", "build", "./..."}, "", false},
		{"another program", []string{"gotest", "test"}, "", false},
		{"go alone", []string{"go"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := goTestHint(tt.args, tt.goflags) != ""; got != tt.want {
				t.Errorf("goTestHint(%q, %q) says something: %v, want %v", tt.args, tt.goflags, got, tt.want)
			}
		})
	}
}
