package edge

import (
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// PushConfigErr10 is err as A2A 1.0 says it: a push notification config
// that does not exist is TaskNotFoundError (A2A 1.0 §3.1.8, §3.1.10),
// where 0.3 answers -32602.
func PushConfigErr10(err error) error {
	if ae, ok := err.(*a2a.Error); ok && ae.Code == a2a.CodeInvalidParams {
		if d, _ := ae.Data.(map[string]any); d != nil && d["field"] == PushConfigIDField {
			return a2a.ErrTaskNotFound.WithMessage("%s", strings.TrimPrefix(ae.Message, "Invalid parameters: "))
		}
	}
	return err
}

// ExtendedCardErr03 is err as A2A 0.3 says it: an agent without an
// extended card answers agent/getAuthenticatedExtendedCard with -32007
// (AuthenticatedExtendedCardNotConfiguredError), where 1.0 answers an
// undeclared one with UnsupportedOperationError (A2A 1.0 §3.3.4).
func ExtendedCardErr03(err error) error {
	if ae, ok := err.(*a2a.Error); ok && ae.Code == a2a.CodeUnsupportedOperation {
		return a2a.ErrAuthenticatedExtendedCardNotConfigured
	}
	return err
}

// PushIn10 marks the push notification config of a 1.0 SendMessage, if
// any, as a 1.0 config: its notifications take the 1.0 shape (A2A 1.0
// §4.3.3).
func PushIn10(p a2a.SendMessageRequest) a2a.SendMessageRequest {
	if p.Configuration != nil && p.Configuration.PushNotificationConfig != nil {
		c := *p.Configuration
		pc := *c.PushNotificationConfig
		pc.ProtocolVersion = a2a.Version10
		c.PushNotificationConfig = &pc
		p.Configuration = &c
	}
	return p
}
