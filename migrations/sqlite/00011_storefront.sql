-- +goose Up
-- A carrier's public profile, as approved.
ALTER TABLE carriers ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE carriers ADD COLUMN website TEXT NOT NULL DEFAULT '';
ALTER TABLE carriers ADD COLUMN support_contact TEXT NOT NULL DEFAULT '';
ALTER TABLE carriers ADD COLUMN status_url TEXT NOT NULL DEFAULT '';
ALTER TABLE carriers ADD COLUMN logo_type TEXT NOT NULL DEFAULT '';
ALTER TABLE carriers ADD COLUMN logo BLOB;
ALTER TABLE carriers ADD COLUMN domain TEXT NOT NULL DEFAULT '';
ALTER TABLE carriers ADD COLUMN domain_token TEXT NOT NULL DEFAULT '';
ALTER TABLE carriers ADD COLUMN domain_verified_at TIMESTAMP;

-- A model's card.
ALTER TABLE models ADD COLUMN family TEXT NOT NULL DEFAULT '';
ALTER TABLE models ADD COLUMN max_output_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE models ADD COLUMN input_modalities TEXT NOT NULL DEFAULT 'text';
ALTER TABLE models ADD COLUMN output_modalities TEXT NOT NULL DEFAULT 'text';

-- A proposed profile, reviewed lightly before it shows.
CREATE TABLE profile_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    description TEXT NOT NULL,
    website TEXT NOT NULL,
    support_contact TEXT NOT NULL,
    status_url TEXT NOT NULL,
    logo_type TEXT NOT NULL DEFAULT '',
    logo BLOB,
    state TEXT NOT NULL,
    author_id BIGINT NOT NULL REFERENCES users (id),
    decided_by BIGINT REFERENCES users (id),
    decision_note TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL,
    decided_at TIMESTAMP
);
CREATE INDEX profile_changes_state ON profile_changes (state, created_at);

-- A company's application to carry.
CREATE TABLE applications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    company TEXT NOT NULL,
    website TEXT NOT NULL,
    contact_name TEXT NOT NULL,
    contact_email TEXT NOT NULL,
    models TEXT NOT NULL,
    description TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    carrier_id BIGINT REFERENCES carriers (id),
    invite_token TEXT NOT NULL DEFAULT '',
    decided_by BIGINT REFERENCES users (id),
    decision_note TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL,
    decided_at TIMESTAMP
);
CREATE INDEX applications_state ON applications (state, created_at);

CREATE TABLE application_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    application_id BIGINT NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
    author_id BIGINT REFERENCES users (id),
    body TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX application_messages_app ON application_messages (application_id, id);

-- A model a carrier proposes for the catalogue.
CREATE TABLE model_proposals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    slug TEXT NOT NULL,
    family TEXT NOT NULL,
    context_tokens BIGINT NOT NULL,
    max_output_tokens BIGINT NOT NULL,
    input_modalities TEXT NOT NULL,
    output_modalities TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL,
    author_id BIGINT NOT NULL REFERENCES users (id),
    decided_by BIGINT REFERENCES users (id),
    decision_note TEXT NOT NULL DEFAULT '',
    model_id BIGINT REFERENCES models (id),
    created_at TIMESTAMP NOT NULL,
    decided_at TIMESTAMP
);
CREATE INDEX model_proposals_state ON model_proposals (state, created_at);

-- +goose Down
DROP TABLE model_proposals;
DROP TABLE application_messages;
DROP TABLE applications;
DROP TABLE profile_changes;
