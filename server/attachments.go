package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/internal/attachment"

	"github.com/a2abridge/a2abridge/internal/binding/edge"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/store"
)

// AttachmentsPath is the path, below a Host's base URL, under which
// attachments are served: GET {base}/api/attachments/{id}/content
// (NewAttachmentHandler; mount it with Host.Handle at
// AttachmentContentPattern).
const AttachmentsPath = attachment.Path

// AttachmentContentPattern is the http.ServeMux pattern of
// NewAttachmentHandler's route.
const AttachmentContentPattern = "GET " + AttachmentsPath + "/{id}/content"

// DefaultAttachmentMaxBytes is AttachmentOptions.MaxBytes when it is not
// set: 8 MiB per file.
const DefaultAttachmentMaxBytes = 8 << 20

// AttachmentOptions turn attachments on for an agent
// (HandlerOptions.Attachments). Every file
// part carried by value (a2a.Raw: 1.0 "raw", 0.3 FileWithBytes)
// in a message a client sends is stored (store.AttachmentStore) and
// replaced, before the message is stored and before the agent sees it,
// by a file part with the URL
//
//	{base}/api/attachments/{id}/content
//
// keeping the part's media type, file name and metadata. The id is 128
// random bits (base64url), unguessable. The URL is served by
// NewAttachmentHandler to the owner of the task only (the same tenant and
// authenticated principal), authenticated as the agent is.
type AttachmentOptions struct {
	// MaxBytes is the most bytes one file part may carry: a message with
	// a larger one is refused with -32602 (InvalidParams, naming the
	// part) and nothing of it is stored. <= 0: DefaultAttachmentMaxBytes.
	// (The whole request is bounded by TransportOptions.MaxBodyBytes
	// too.)
	MaxBytes int64
	// PublicURL, if set, is the base URL (scheme://host[:port][/prefix])
	// written into attachment URLs. Empty: the base URL the Host derives
	// for the request (Host.BaseURL: HostOptions.PublicURL, a trusted
	// proxy's forwarding headers, an allowed Host header…), the one the
	// agent's card names; for a message that reached the AgentHandler other
	// than through a Host's routes, the URL is the path alone.
	PublicURL string
}

func (o *AttachmentOptions) maxBytes() int64 {
	if o.MaxBytes <= 0 {
		return DefaultAttachmentMaxBytes
	}
	return o.MaxBytes
}

// attachBaseKey carries, in a request's context, a func() string
// returning the base URL of the Host the request reached (Host.BaseURL;
// set by a Host's routes of an agent with attachments).
type attachBaseKey struct{}

// attachmentBase is the base URL attachment URLs start with for ctx (""
// when the agent has no attachments).
func (h *AgentHandler) attachmentBase(ctx context.Context) string {
	if h.opts.Attachments == nil {
		return ""
	}
	if u := strings.TrimRight(h.opts.Attachments.PublicURL, "/"); u != "" {
		return u
	}
	if f, ok := ctx.Value(attachBaseKey{}).(func() string); ok {
		return f()
	}
	return ""
}

// withAttachBase gives next's requests the Host's base URL for
// attachment URLs (attachBaseKey), when h has attachments.
func (host *Host) withAttachBase(h *AgentHandler, next http.Handler) http.Handler {
	if h.opts.Attachments == nil || h.opts.Attachments.PublicURL != "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), attachBaseKey{}, func() string { return host.BaseURL(r) })))
	})
}

// hasFileBytes reports whether m carries a file by value.
func hasFileBytes(m *a2a.Message) bool {
	return slices.ContainsFunc(m.Parts, func(p a2a.Part) bool {
		_, ok := p.Content.(a2a.Raw)
		return ok
	})
}

// checkAttachments refuses a message with a file part larger than the
// limit, before anything is stored.
func (h *AgentHandler) checkAttachments(m *a2a.Message) error {
	limit := h.opts.Attachments.maxBytes()
	for i, p := range m.Parts {
		if raw, ok := p.Content.(a2a.Raw); ok && int64(len(raw)) > limit {
			return a2a.InvalidParams(fmt.Sprintf("/params/message/parts/%d", i),
				fmt.Sprintf("the file is %d bytes; this agent accepts files of at most %d bytes", len(raw), limit))
		}
	}
	return nil
}

// storeAttachments stores the file parts of m carried by value as
// attachments of task taskID and owner, and replaces them in m (whose
// Parts slice is replaced, not modified) by file parts with their URLs.
// It returns the ids of the attachments stored: if m is then not
// accepted, the caller deletes them (dropAttachments). On error nothing
// is left stored.
func (h *AgentHandler) storeAttachments(ctx context.Context, owner, taskID string, m *a2a.Message) ([]string, error) {
	parts, ids, err := h.putFiles(ctx, owner, taskID, h.attachmentBase(ctx), m.Parts)
	if err != nil {
		return nil, err
	}
	m.Parts = parts
	return ids, nil
}

// putFiles stores the file parts of parts carried by value as
// attachments of task taskID and owner and returns parts (a new slice
// when one was stored) with those replaced by file parts with their URLs
// below base, and the ids of the attachments stored. On error, the
// attachments it stored are deleted.
func (h *AgentHandler) putFiles(ctx context.Context, owner, taskID, base string, parts []a2a.Part) ([]a2a.Part, []string, error) {
	as, _ := h.e.Store().(store.AttachmentStore)
	cloned := false
	var ids []string
	for i, p := range parts {
		raw, ok := p.Content.(a2a.Raw)
		if !ok {
			continue
		}
		if !cloned {
			parts, cloned = slices.Clone(parts), true
		}
		id := attachment.NewID()
		err := as.PutAttachment(ctx, store.Attachment{ID: id, Agent: h.name, Owner: owner, TaskID: taskID,
			MediaType: p.MediaType, Filename: p.Filename, Bytes: raw})
		if err != nil {
			h.dropAttachments(ctx, ids)
			return nil, nil, fmt.Errorf("store attachment: %w", err)
		}
		ids = append(ids, id)
		p.Content = a2a.URL(base + AttachmentsPath + "/" + id + "/content")
		parts[i] = p
	}
	return parts, ids, nil
}

// dropAttachmentsTimeout bounds dropAttachments.
const dropAttachmentsTimeout = 10 * time.Second

// dropAttachments deletes the attachments ids, stored for a message
// that was not accepted (no stored message refers to them, and
// retention, which deletes attachments with their task, would never
// delete them if their task is never created). It runs even when ctx
// has ended (the request gave up), for at most dropAttachmentsTimeout;
// a failure is logged.
func (h *AgentHandler) dropAttachments(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	as, _ := h.e.Store().(store.AttachmentStore)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropAttachmentsTimeout)
	defer cancel()
	if err := as.DeleteAttachments(ctx, ids); err != nil {
		h.e.Log().Error("attachments of a message not accepted not deleted", "agent", h.name, "attachments", len(ids), "err", err)
	}
}

// ErrAttachmentTooLarge is returned (wrapped, naming the part and the
// sizes) by TaskUpdater.StoreFiles for a file part larger than the
// agent's AttachmentOptions.MaxBytes.
var ErrAttachmentTooLarge = errors.New("a2abridge: file over the attachment size limit")

// fileSink is where an execution's StoreFiles stores files: its agent's
// handler, and the base URL of the request that started the execution.
type fileSink struct {
	h    *AgentHandler
	base string
}

// MaxFileBytes is the size of the largest file StoreFiles stores
// (AttachmentOptions.MaxBytes, or its default), in bytes; 0 when the
// agent has no attachments option or runs under RunAgent (files then stay
// inline).
func (t *TaskUpdater) MaxFileBytes() int64 {
	if t.files == nil {
		return 0
	}
	return t.files.h.opts.Attachments.maxBytes()
}

// StoreFiles returns parts with every file part carried by value
// (a2a.Raw) stored as an attachment of this task and replaced by
// a file part with its URL, {base}/api/attachments/{id}/content (media
// type, file name and part metadata kept), exactly as the files a client
// sends are (HandlerOptions.Attachments): an agent passes
// the parts of what it produces through it before it emits them, so its
// artifacts and history carry URLs, never inline bytes. The attachments
// belong to this task and its owner (NewAttachmentHandler serves them to
// the task's owner; they are deleted with the task). base is the one of
// the request that started this execution (AttachmentOptions.PublicURL
// if set). The parts slice given is not modified; when nothing is
// stored, it is returned as is.
//
// When the agent has no attachments option, or under RunAgent, parts is
// returned as is (files stay inline). Errors: ErrAttachmentTooLarge
// (wrapped, naming the part's index and size) for a file over
// AttachmentOptions.MaxBytes, with nothing stored; the store's error.
func (t *TaskUpdater) StoreFiles(ctx context.Context, parts []a2a.Part) ([]a2a.Part, error) {
	if t.files == nil {
		return parts, nil
	}
	h := t.files.h
	limit := h.opts.Attachments.maxBytes()
	for i, p := range parts {
		if raw, ok := p.Content.(a2a.Raw); ok && int64(len(raw)) > limit {
			return nil, fmt.Errorf("%w: part %d is %d bytes, at most %d", ErrAttachmentTooLarge, i, len(raw), limit)
		}
	}
	parts, _, err := h.putFiles(ctx, t.owner, t.taskID, t.files.base, parts)
	return parts, err
}

// sameAttachments reports whether incoming, a retry carrying files by
// value, is stored as stored: each file part with bytes in incoming is,
// in stored, a part with the URL of an attachment of this agent holding
// the same bytes, media type, file name and metadata; everything else
// equal (sameMessage).
func (h *AgentHandler) sameAttachments(ctx context.Context, incoming, stored *a2a.Message) bool {
	as, ok := h.e.Store().(store.AttachmentStore)
	if h.opts.Attachments == nil || !ok || len(incoming.Parts) != len(stored.Parts) || !hasFileBytes(incoming) {
		return false
	}
	m := *incoming
	m.Parts = slices.Clone(incoming.Parts)
	for i, p := range m.Parts {
		raw, ok := p.Content.(a2a.Raw)
		if !ok {
			continue
		}
		sp := stored.Parts[i]
		u, ok := sp.Content.(a2a.URL)
		id := attachment.IDOf(string(u))
		if !ok || id == "" || sp.Filename != p.Filename || sp.MediaType != p.MediaType || !reflect.DeepEqual(sp.Metadata, p.Metadata) {
			return false
		}
		a, err := as.Attachment(ctx, id)
		if err != nil || a.Agent != h.name || !bytes.Equal(a.Bytes, raw) {
			return false
		}
		m.Parts[i] = sp
	}
	return sameMessage(&m, stored)
}

// tenantOfOwner returns the tenant an owner key (AgentHandler.owner) is
// scoped to ("" for the default tenant).
func tenantOfOwner(key string) string {
	if !strings.HasPrefix(key, `t"`) {
		return ""
	}
	q, err := strconv.QuotedPrefix(key[1:])
	if err != nil {
		return ""
	}
	t, _ := strconv.Unquote(q)
	return t
}

// NewAttachmentHandler serves attachments (AttachmentOptions) at
// AttachmentContentPattern, GET /api/attachments/{id}/content: the
// attachment's bytes, to a caller authenticated as the agent the
// attachment belongs to requires (AgentHandler.Authenticated: 401 with its
// challenges, 503 when the authenticator is unavailable) who owns it
// (the same tenant and principal as the task's creator). The answer
// carries the attachment's media type as Content-Type
// (application/octet-stream when it is not a valid media type),
// X-Content-Type-Options: nosniff, Content-Disposition: attachment with
// the file name (RFC 6266, RFC 2231 encoded when not ASCII), a strong
// ETag (the SHA-256 of the content), Cache-Control: private, and a
// sandbox Content-Security-Policy; conditional and range requests are
// honoured (http.ServeContent). An unknown id, an attachment of an agent
// that lookup does not find (e.g. Host.Handler after the agent was
// removed) or of another owner: 404, with nothing that tells them apart.
// Errors are JSON-RPC error bodies (WriteError). log may be nil.
func NewAttachmentHandler(st store.AttachmentStore, lookup func(agent string) (*AgentHandler, bool), log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	notFound := func(w http.ResponseWriter) {
		edge.WriteError(w, http.StatusNotFound, a2a.ErrInvalidRequest.WithMessage("No such attachment"))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-cache")
		id := r.PathValue("id")
		if !attachment.ValidID(id) {
			notFound(w)
			return
		}
		a, err := st.Attachment(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			notFound(w)
			return
		}
		if err != nil {
			log.Error("attachment", "id", id, "err", err)
			edge.WriteError(w, http.StatusInternalServerError, a2a.ErrInternal)
			return
		}
		h, ok := lookup(a.Agent)
		if !ok {
			notFound(w)
			return
		}
		h.Authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			owner, ok := h.owner(withTenant(r.Context(), tenantOfOwner(a.Owner)))
			if !ok || owner != a.Owner {
				notFound(w)
				return
			}
			attachment.Serve(w, r, &a)
		}), func(w http.ResponseWriter, _ *http.Request, status int, err *a2a.Error) {
			edge.WriteError(w, status, err)
		}).ServeHTTP(w, r)
	})
}
