// pulumi-codegen writes a package's SDK for one language with Pulumi's own code generators, as
// `pulumi package add` has the language host write it (an SDK for local use), for when the language
// hosts themselves cannot be built.
//
//	pulumi-codegen nodejs|python|go SCHEMA.json OUTDIR
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// standalone resolves no other package: a schema that refers to one is an error here.
type standalone struct{}

func (standalone) refuse(name string) error {
	return fmt.Errorf("the schema refers to package %q, and pulumi-codegen loads no other package", name)
}

func (l standalone) LoadPackage(name string, _ *semver.Version) (*schema.Package, error) {
	return nil, l.refuse(name)
}

func (l standalone) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, l.refuse(d.Name)
}

func (l standalone) LoadPackageReference(name string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, l.refuse(name)
}

func (l standalone) LoadPackageReferenceV2(
	_ context.Context, d *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, l.refuse(d.Name)
}

func bind(raw []byte) (*schema.Package, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, err
	}
	pkg, diags, err := schema.BindSpec(spec, standalone{}, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	for _, d := range diags { // warnings, which the CLI prints too
		fmt.Fprintf(os.Stderr, "pulumi-codegen: warning: %s\n", d.Error())
	}
	return pkg, nil
}

func generate(language string, raw []byte) (map[string][]byte, error) {
	// The CLI binds the schema, marks it packable (as `package add` does), and sends it to the language
	// host as JSON, which binds it again: the same two steps here.
	pkg, err := bind(raw)
	if err != nil {
		return nil, err
	}
	pkg.SupportPack = true
	if raw, err = pkg.MarshalJSON(); err != nil {
		return nil, err
	}
	if pkg, err = bind(raw); err != nil {
		return nil, err
	}
	// The tool names are the language hosts': they appear in the generated files' headers.
	switch language {
	case "nodejs":
		return nodejs.GeneratePackage("pulumi-language-nodejs", pkg, nil, nil, true, standalone{})
	case "python":
		return python.GeneratePackage("pulumi-language-python", pkg, nil, standalone{})
	case "go":
		return gogen.GeneratePackage("pulumi-language-go", pkg, nil)
	}
	return nil, fmt.Errorf("unknown language %q: nodejs, python or go", language)
}

func run(language, schemaPath, out string) error {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	files, err := generate(language, raw)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for name, data := range files {
		path := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-codegen nodejs|python|go SCHEMA.json OUTDIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-codegen: %v\n", err)
		os.Exit(1)
	}
}
