package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/record"
	"github.com/a2abridge/a2abridge/store"
)

// Agents reads rows of the columns name, spec, created, updated
// (store.AgentRegistry.Agents); errors are wrapped as "agents".
func (n Name) Agents(rows Rows) ([]store.AgentSpec, error) {
	var out []store.AgentSpec
	for rows.Next() {
		var a store.AgentSpec
		var name []byte
		var created, updated int64
		if err := rows.Scan(&name, &a.Spec, &created, &updated); err != nil {
			return nil, n.Wrap("agents", err)
		}
		a.Name = string(name)
		a.Created, a.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
		out = append(out, a)
	}
	return out, n.Wrap("agents", rows.Err())
}

// TaskCounts reads rows of the columns agent, state (its record name),
// count (store.TaskCounter.CountTasks); errors are wrapped as "count
// tasks".
func (n Name) TaskCounts(rows Rows) ([]store.TaskCount, error) {
	var out []store.TaskCount
	for rows.Next() {
		var agent []byte
		var state string
		var c store.TaskCount
		if err := rows.Scan(&agent, &state, &c.Tasks); err != nil {
			return nil, n.Wrap("count tasks", err)
		}
		// A name no version wrote counts as unspecified.
		c.Agent = string(agent)
		c.State, _ = record.ParseStateName(state)
		out = append(out, c)
	}
	return out, n.Wrap("count tasks", rows.Err())
}

// EncodePushConfig checks that c has an id and encodes it as a record
// (store.Store.SetPushConfig).
func (n Name) EncodePushConfig(c *a2a.PushNotificationConfig) ([]byte, error) {
	if c.ID == "" {
		return nil, fmt.Errorf("%s: push config without id", n)
	}
	body, err := record.MarshalPushConfig(c)
	if err != nil {
		return nil, fmt.Errorf("%s: encode push config: %w", n, err)
	}
	return body, nil
}

// PushConfigs reads rows of the columns task_id, body (a record),
// delivered, created; never nil. Errors are wrapped as "push configs".
func (n Name) PushConfigs(rows Rows) ([]store.PushConfig, error) {
	out := []store.PushConfig{}
	for rows.Next() {
		var p store.PushConfig
		var id, body []byte
		var created int64
		if err := rows.Scan(&id, &body, &p.Delivered, &created); err != nil {
			return nil, n.Wrap("push configs", err)
		}
		p.TaskID = string(id)
		var err error
		if p.Config, err = record.UnmarshalPushConfig(body); err != nil {
			return nil, fmt.Errorf("%s: decode push config of task %s: %w", n, p.TaskID, err)
		}
		p.Created = time.Unix(0, created).UTC()
		out = append(out, p)
	}
	return out, n.Wrap("push configs", rows.Err())
}

// Attachment reads attachment id from row, of the columns agent, owner,
// task_id, media_type, filename, body, created: store.ErrNotFound when
// there is no row, other errors wrapped as "attachment". Its Bytes are
// never nil.
func (n Name) Attachment(row Row, id string) (store.Attachment, error) {
	a := store.Attachment{ID: id}
	var created int64
	var agent, owner, taskID, mediaType, filename []byte
	err := row.Scan(&agent, &owner, &taskID, &mediaType, &filename, &a.Bytes, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Attachment{}, store.ErrNotFound
	}
	if err != nil {
		return store.Attachment{}, n.Wrap("attachment", err)
	}
	a.Agent, a.Owner, a.TaskID, a.MediaType, a.Filename = string(agent), string(owner), string(taskID), string(mediaType), string(filename)
	if a.Bytes == nil {
		a.Bytes = []byte{}
	}
	a.Created = time.Unix(0, created).UTC()
	return a, nil
}
