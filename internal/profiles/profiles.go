// Package profiles reads the a2abridge client's config file: named
// profiles of an agent's URL, credentials and headers, so that a client
// command can say "prod" instead of a URL and its flags.
package profiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/internal/yamlkeys"
	"go.yaml.in/yaml/v3"
)

// EnvConfig names the environment variable that holds the client config
// file's path (default: client.yaml in the user's config directory).
const EnvConfig = "A2ABRIDGE_CLIENT_CONFIG"

// File is the client config file (YAML): named profiles.
//
//	profiles:
//	  prod:
//	    url: https://agents.example.com/a2a/echo
//	    token: ${PROD_A2A_TOKEN}
//	    api_key: ${PROD_A2A_KEY}
//	    headers:
//	      X-Tenant: acme
//
// Values may reference environment variables as ${NAME}, expanded when the
// profile is used (an unset variable is then an error). Unknown keys are
// errors naming their line.
type File struct {
	Profiles map[string]Profile `yaml:"profiles"`
}

// Profile is one named profile: the agent's URL and the credentials and
// headers sent to it.
type Profile struct {
	URL     string            `yaml:"url"`
	Token   string            `yaml:"token"`
	APIKey  string            `yaml:"api_key"`
	Headers map[string]string `yaml:"headers"`
}

// Name is what a profile may be called, and what a URL argument
// must look like to be taken for one.
var Name = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Path is $A2ABRIDGE_CLIENT_CONFIG, else client.yaml in the
// user's config directory (~/.config/a2abridge on Linux).
func Path() string {
	if p := os.Getenv(EnvConfig); p != "" {
		return p
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return filepath.Join("~", ".config", "a2abridge", "client.yaml")
	}
	return filepath.Join(d, "a2abridge", "client.yaml")
}

// Read reads the client config file; a missing default file is
// no profiles, a missing $A2ABRIDGE_CLIENT_CONFIG an error.
func Read() (*File, string, error) {
	path := Path()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && os.Getenv(EnvConfig) == "" {
		return &File{}, path, nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("client config: %w", err)
	}
	f, err := Parse(raw)
	if err != nil {
		return nil, path, fmt.Errorf("%s:%w", path, err)
	}
	return f, path, nil
}

// Parse decodes a client config file. Errors never quote values
// (they may be tokens): "LINE: what".
func Parse(raw []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf(" %s", yamlkeys.RedactError(err))
	}
	f := &File{}
	if doc.Kind == 0 {
		return f, nil
	}
	if err := yamlkeys.CheckKeys(&doc, reflect.TypeFor[File](), ""); err != nil {
		return nil, err
	}
	if err := doc.Decode(f); err != nil {
		return nil, fmt.Errorf(" %s", yamlkeys.RedactError(err))
	}
	for name := range f.Profiles {
		if !Name.MatchString(name) {
			return nil, fmt.Errorf(" profile %q: a name is letters, digits, '.', '_' or '-' (at most 64)", name)
		}
	}
	return f, nil
}

// Find returns the named profile (its ${NAME} references expanded),
// or nil when the file has none of that name.
func Find(name string) (*Profile, error) {
	f, path, err := Read()
	if err != nil {
		return nil, err
	}
	p, ok := f.Profiles[name]
	if !ok {
		return nil, nil
	}
	var missing []string
	expand := func(s string) string {
		return yamlkeys.EnvRef.ReplaceAllStringFunc(s, func(m string) string {
			n := yamlkeys.EnvRef.FindStringSubmatch(m)[1]
			v := os.Getenv(n)
			if v == "" {
				missing = append(missing, n)
			}
			return v
		})
	}
	p.URL, p.Token, p.APIKey = expand(p.URL), expand(p.Token), expand(p.APIKey)
	h := make(map[string]string, len(p.Headers))
	for k, v := range p.Headers {
		h[k] = expand(v)
	}
	p.Headers = h
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("%s: profile %s: environment variable(s) not set: %s", path, name, strings.Join(slices.Compact(missing), ", "))
	}
	return &p, nil
}
