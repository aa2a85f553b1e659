package inventory

// Target returns the registered name of what ref names, for telemetry and
// audit records: the static resource whose URI is ref, else the template
// whose URITemplate is ref exactly (a completion reference), else the
// template that matches ref as a URI. ok is false when nothing does.
//
// The name is one the operator registered, never client input, so it is a
// low-cardinality label. Target decides nothing about access: it names
// hidden and protected resources too, and must not be used to answer
// clients.
func (inv *Inventory) Target(ref string) (name string, ok bool) {
	if i, ok := inv.staticIndex[ref]; ok {
		return inv.statics[i].res.Name, true
	}
	if rt := inv.byTemplate[ref]; rt != nil {
		return rt.tmpl.Name, true
	}
	for _, rt := range inv.templates {
		if rt.ut.Matches(ref) {
			return rt.tmpl.Name, true
		}
	}
	return "", false
}
