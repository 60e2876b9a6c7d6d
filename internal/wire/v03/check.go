package v03

import (
	"errors"
	"fmt"

	"github.com/a2abridge/a2abridge/a2a"
)

// CheckEvent reports whether MarshalEvent(e) would decode again with
// UnmarshalEvent, without encoding and decoding: the required fields are
// present, states and roles valid, every part well formed. Stores use it to
// refuse what they could not read back.
func CheckEvent(e a2a.Event) error {
	switch v := e.(type) {
	case *a2a.Task:
		return checkTask(v)
	case *a2a.Message:
		return checkMessage(v)
	case *a2a.TaskStatusUpdateEvent:
		if v.TaskID == "" {
			return errors.New("status-update without taskId")
		}
		return checkStatus(&v.Status)
	case *a2a.TaskArtifactUpdateEvent:
		if v.TaskID == "" {
			return errors.New("artifact-update without taskId")
		}
		return checkArtifact(&v.Artifact)
	}
	return fmt.Errorf("unknown event type %T", e)
}

func checkTask(t *a2a.Task) error {
	if t.ID == "" || t.ContextID == "" {
		return errors.New("task without id or contextId")
	}
	if err := checkStatus(&t.Status); err != nil {
		return err
	}
	for i := range t.History {
		if err := checkMessage(&t.History[i]); err != nil {
			return err
		}
	}
	for i := range t.Artifacts {
		if err := checkArtifact(&t.Artifacts[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkStatus(s *a2a.TaskStatus) error {
	if !s.State.Valid() {
		return fmt.Errorf("invalid task state %v", s.State)
	}
	if s.Message != nil {
		return checkMessage(s.Message)
	}
	return nil
}

func checkMessage(m *a2a.Message) error {
	if m.MessageID == "" {
		return errors.New("message without messageId")
	}
	if m.Role != a2a.RoleUser && m.Role != a2a.RoleAgent {
		return fmt.Errorf("message role %q", m.Role)
	}
	return checkParts(m.Parts)
}

func checkArtifact(a *a2a.Artifact) error {
	if a.ArtifactID == "" {
		return errors.New("artifact without artifactId")
	}
	return checkParts(a.Parts)
}

func checkParts(ps []a2a.Part) error {
	for _, p := range ps {
		switch p.Content.(type) {
		case a2a.Text, a2a.Data, a2a.Raw, a2a.URL:
		default:
			return errors.New("part without content")
		}
	}
	return nil
}
