package store

import "context"

// seedSkills are the demo skills: alice owns two; bob owns two and shares
// team-glossary with alice.
var seedSkills = []struct {
	owner, shareWith string
	skill            NewSkill
}{
	{"alice", "", NewSkill{Name: "release-notes", Description: "Write release notes from the merged changes, in the team's style",
		Body: "# Release notes\n\nGroup the changes as `templates/entry.md` shows; follow `references/style.md`.\n",
		Files: []NewSkillFile{
			{Path: "templates/entry.md", MIMEType: "text/markdown", Body: []byte("## {{version}}\n\n- {{change}}\n")},
			{Path: "references/style.md", MIMEType: "text/markdown", Body: []byte("# Style\n\nPresent tense. One line per change.\n")},
		}}},
	{"alice", "", NewSkill{Name: "meeting-minutes", Description: "Turn a meeting transcript into minutes with decisions and actions",
		Body: "# Meeting minutes\n\nUse `templates/minutes.md`.\n",
		Files: []NewSkillFile{
			{Path: "templates/minutes.md", MIMEType: "text/markdown", Body: []byte("# Minutes\n\n## Decisions\n\n## Actions\n")},
			{Path: "scripts/count_speakers.py", MIMEType: "text/x-python", Body: []byte("import sys\nprint(len(set(l.split(':')[0] for l in sys.stdin)))\n")},
		}}},
	{"bob", "", NewSkill{Name: "incident-review", Description: "Run a blameless incident review",
		Body: "# Incident review\n\nAsk what happened, not who.\n"}},
	{"bob", "alice", NewSkill{Name: "team-glossary", Description: "The team's words and what they mean",
		Body:  "# Glossary\n\nSee `terms.md`.\n",
		Files: []NewSkillFile{{Path: "terms.md", MIMEType: "text/markdown", Body: []byte("- MCP: Model Context Protocol\n")}}}},
}

// SeedSkills gives the demo users their skills (see seedSkills), under the
// owner keys owner gives them. A user who has a skill already is left
// alone, so it can run at every start.
func SeedSkills(ctx context.Context, st SkillStore, owner func(subject string) string) error {
	done := map[string]bool{}
	for _, s := range seedSkills {
		o := owner(s.owner)
		if _, ok := done[o]; !ok {
			existing, err := st.ListSkills(ctx, o, "", 1)
			if err != nil {
				return err
			}
			done[o] = len(existing) > 0
		}
		if done[o] {
			continue
		}
		ns := s.skill
		ns.Owner = o
		created, err := st.CreateSkill(ctx, ns)
		if err != nil {
			return err
		}
		if s.shareWith != "" {
			if err := st.ShareSkill(ctx, o, created.ID, owner(s.shareWith)); err != nil {
				return err
			}
		}
	}
	return nil
}
