package app

import (
	"errors"
	"net/http"

	"github.com/mcpkit/mcpkit/authn"
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

// apiUnshareSkill revokes a share of one of the caller's skills:
//
//	DELETE /api/skills/{id}/shares/{user}
//
// From the next call on, the user neither lists the skill (skills/list)
// nor gets it (skills/get) nor reads its files (resources/read,
// resources/directory/read): every one of those asks the store, on every
// instance of a fleet. A skill that is not the caller's answers as one
// that does not exist; unsharing one that was not shared is no error.
func (a *App) apiUnshareSkill(w http.ResponseWriter, r *http.Request) {
	caller, id, user, ok := unshareParams(w, r, errSkillNotFound)
	if !ok {
		return
	}
	switch err := a.skills.UnshareSkill(r.Context(), caller, id, user); {
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusNotFound, errSkillNotFound)
		return
	case user == caller && errors.Is(err, store.ErrInvalid):
		writeJSON(w, http.StatusBadRequest, errShareOwner)
		return
	case !a.storeOK(w, r, "unshare skill", err, errBadUser):
		return
	}
	authn.SetPrivate(w.Header())
	w.WriteHeader(http.StatusNoContent)
}
