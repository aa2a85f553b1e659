package inventory

import (
	"fmt"

	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/inventory/internal/contract"
	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

// MaxLimit is the largest page size and ListRequest.Limit.
const MaxLimit = budget.MaxItems

// ValidatePage checks one page a list callback returned for req against
// the contract, and returns a [*ContractError] naming the first broken
// rule, or nil. With a nil tmpl the URIs are only checked for length and
// characters, not matched. Inventory runs the same checks on every page
// (entry by entry, as it adds them to the page); inventorytest runs them
// on whole traversals.
func ValidatePage(tmpl *Template, req ListRequest, p Page) error {
	var t *uritemplate.Template
	name := ""
	if tmpl != nil {
		name = tmpl.Name
		var err error
		if t, err = uritemplate.Parse(tmpl.URITemplate); err != nil {
			return fmt.Errorf("inventory: template %q: %w", tmpl.Name, err)
		}
	}
	var c pageCheck
	if ce := c.start(name, t, req, p); ce != nil {
		return ce
	}
	for i := range p.Entries {
		if ce := c.entry(i); ce != nil {
			return ce
		}
	}
	return nil
}

// pageCheck checks a callback's page against the contract (see
// contract.Page): the page as a whole (start), then each entry in order
// (entry), so that an entry is validated just before it is added to the
// page.
type pageCheck struct {
	contract.Page
	source  string
	entries []Entry
}

// start checks the page as a whole and prepares the entry checks.
func (c *pageCheck) start(source string, t *uritemplate.Template, req ListRequest, p Page) *ContractError {
	c.source, c.entries = source, p.Entries
	if r := c.Page.Start(t, req.After, req.Limit, len(p.Entries), p.HasMore); r != contract.OK {
		return c.fail(r, -1)
	}
	return nil
}

func (c *pageCheck) fail(r contract.Rule, entry int) *ContractError {
	return &ContractError{Source: c.source, Rule: broken(r), Entry: entry}
}

// uri returns entry i's URI.
func (c *pageCheck) uri(i int) string { return c.entries[i].URI }

// entry checks entry i, after the entries before it.
func (c *pageCheck) entry(i int) *ContractError {
	if r := c.Page.Entry(i, (*contract.Entry)(&c.entries[i]), c.uri); r != contract.OK {
		return c.fail(r, i)
	}
	return nil
}

// contractRules names the rules of contract.Rule.
var contractRules = [contract.NumRules]Rule{
	contract.TooManyEntries: RuleTooManyEntries,
	contract.HasMoreEmpty:   RuleHasMoreEmpty,
	contract.KeyLength:      RuleKeyLength,
	contract.KeyCharset:     RuleKeyCharset,
	contract.KeyOrder:       RuleKeyOrder,
	contract.KeyAfter:       RuleKeyAfter,
	contract.URIEmpty:       RuleURIEmpty,
	contract.URILength:      RuleURILength,
	contract.URIMatch:       RuleURIMatch,
	contract.URIDuplicate:   RuleURIDuplicate,
	contract.NameEmpty:      RuleNameEmpty,
	contract.NameLength:     RuleNameLength,
	contract.NameInvalid:    RuleNameInvalid,
	contract.MIMELength:     RuleMIMELength,
	contract.MIMESyntax:     RuleMIMESyntax,
}

// broken returns the Rule of r ("" for contract.OK).
func broken(r contract.Rule) Rule { return contractRules[r] }
