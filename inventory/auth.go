package inventory

// NeedsAuthentication reports whether anything in the registry can only be
// served to an authenticated caller: a list source, or a protected static
// resource or template. A transport serving such an inventory must be able
// to authenticate callers and answer 401 challenges.
func (inv *Inventory) NeedsAuthentication() bool {
	if len(inv.sources) > 0 {
		return true
	}
	for _, s := range inv.statics {
		if s.res.Access == Protected {
			return true
		}
	}
	for _, rt := range inv.templates {
		if rt.tmpl.Access == Protected {
			return true
		}
	}
	return false
}
