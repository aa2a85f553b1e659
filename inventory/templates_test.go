package inventory_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

func templatesFixture(t *testing.T, opts inventory.Options) *inventory.Inventory {
	t.Helper()
	tmpls := []inventory.Template{
		docsTemplate(emptyList), // protected, docs:read
		{Name: "files", Title: "Files", Description: "Public files", URITemplate: "file:///{+path}", MIMEType: "application/octet-stream", Access: inventory.Public, Read: readEcho},
		{Name: "internal", URITemplate: "internal://{id}", Access: inventory.Public, Hidden: true, Read: readEcho},
		notesTemplate(emptyList), // protected, notes:read
	}
	inv, err := inventory.New(nil, tmpls, opts)
	require.NoError(t, err)
	return inv
}

type templatesResult struct {
	ResourceTemplates []map[string]string `json:"resourceTemplates"`
	NextCursor        *string             `json:"nextCursor"`
}

func templatesWalk(t *testing.T, inv *inventory.Inventory, caller *principal.Principal) ([]string, []templatesResult) {
	t.Helper()
	var names []string
	var pages []templatesResult
	cursor := ""
	for {
		out, err := templatesWire(context.Background(), inv, caller, cursor, testEnv)
		require.NoError(t, err)
		var resp struct {
			Result templatesResult `json:"result"`
		}
		require.NoError(t, json.Unmarshal(out, &resp), "%s", out)
		pages = append(pages, resp.Result)
		for _, tm := range resp.Result.ResourceTemplates {
			names = append(names, tm["name"])
		}
		if resp.Result.NextCursor == nil {
			return names, pages
		}
		require.NotEmpty(t, *resp.Result.NextCursor)
		cursor = *resp.Result.NextCursor
	}
}

func TestTemplatesDiscovery(t *testing.T) {
	open := templatesFixture(t, inventory.Options{})
	for _, caller := range []*principal.Principal{nil, bob(), alice()} {
		names, _ := templatesWalk(t, open, caller)
		assert.Equal(t, []string{"documents", "files", "notes"}, names, "open discovery: every discoverable template, hidden ones never")
	}
	prot := templatesFixture(t, inventory.Options{Discovery: inventory.DiscoveryProtected})
	names, _ := templatesWalk(t, prot, nil)
	assert.Equal(t, []string{"files"}, names)
	names, _ = templatesWalk(t, prot, bob())
	assert.Equal(t, []string{"documents", "files"}, names)
	names, _ = templatesWalk(t, prot, alice())
	assert.Equal(t, []string{"documents", "files", "notes"}, names)
}

func TestTemplatesPagesAndItems(t *testing.T) {
	inv := templatesFixture(t, inventory.Options{PageSize: 2})
	names, pages := templatesWalk(t, inv, nil)
	assert.Equal(t, []string{"documents", "files", "notes"}, names)
	require.Len(t, pages, 2)
	assert.Equal(t, map[string]string{
		"uriTemplate": "file:///{+path}", "name": "files", "title": "Files",
		"description": "Public files", "mimeType": "application/octet-stream",
	}, pages[0].ResourceTemplates[1])
	assert.Nil(t, pages[1].NextCursor)

	exact := templatesFixture(t, inventory.Options{PageSize: 3})
	_, pages = templatesWalk(t, exact, nil)
	assert.Len(t, pages, 1, "a page that ends exactly at the last template has no cursor")
}

func TestTemplatesCursorBinding(t *testing.T) {
	inv := templatesFixture(t, inventory.Options{PageSize: 1})
	out, err := templatesWire(context.Background(), inv, bob(), "", testEnv)
	require.NoError(t, err)
	c := extractCursor(t, out)
	_, err = templatesWire(context.Background(), inv, alice(), c, testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid)
	_, err = templatesWire(context.Background(), inv, bob(), c, testEnv)
	assert.NoError(t, err)
	_, err = templatesWire(context.Background(), inv, bob(), c+"x", testEnv)
	requireCursorError(t, err, inventory.ReasonInvalid)
}
