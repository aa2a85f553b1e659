package app

import (
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/examples/documents/store"
)

var errSkillNotFound = apiError{"not_found", "skill not found"}

// apiShareSkill shares one of the caller's skills with another user:
//
//	POST /api/skills/{id}/shares  {"with":"bob"}
//
// Skills have no list_changed notification (the extension defines none):
// clients list again when the listing's ttlMs (0) says so.
func (a *App) apiShareSkill(w http.ResponseWriter, r *http.Request) {
	caller := callerOf(r)
	id, with, grantee, ok := shareRequest(w, r, errSkillNotFound)
	if !ok {
		return
	}
	if grantee == caller {
		writeJSON(w, http.StatusBadRequest, errShareOwner)
		return
	}
	switch err := a.skills.ShareSkill(r.Context(), caller, id, grantee); {
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusNotFound, errSkillNotFound) // not the caller's, or none: the same answer
		return
	case !a.storeOK(w, r, "share skill", err, errBadGrantee):
		return
	}
	writeJSON(w, http.StatusOK, struct {
		ID         string `json:"id"`
		SharedWith string `json:"sharedWith"`
	}{id, with})
}
