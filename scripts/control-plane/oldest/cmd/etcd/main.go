// Command etcd is the etcd server at the version that k8s.io/kubernetes pins
// (go.etcd.io/etcd/server/v3 in this module's go.sum). etcd 3.5 ships its
// main package in the repository's root module, which carries replace
// directives and so cannot be built from a dependent module; this is the same
// two lines.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
