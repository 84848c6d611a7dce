//! Tools the classifier has never seen (issue 40, item 3): invented tool sets — a GitHub-like
//! MCP server, a shop, a calendar, an airline's customer-service tools (as tau-bench has) —
//! each tool with its JSON input schema and MCP annotations as its server would declare it,
//! and the class it must get from the built-in rules raised by its declaration. None of these
//! tools is named by a rule of the default set; the rules describe behaviours (verbs, argument
//! roles, declared semantics).

use augur_gate::classifier::{Classifier, Declared, ToolDeclaration};
use augur_gate::dtr::{DataExposure, Implication, Reversibility, ToolEscalation};
use serde_json::{json, Value};

/// What a tool's calls must be.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    /// Reads only (t = READ_ONLY): no destination counts.
    Read,
    /// Changes state (t ≥ FILE_WRITE): a sink whose destinations and payloads count.
    Write,
    /// Reaches another party (t = NETWORK) without moving money.
    Network,
    /// Moves money (SENSITIVE·NETWORK).
    Money,
    /// Cannot be undone (a write, r = IRREVERSIBLE).
    Irreversible,
}

struct Tool {
    name: &'static str,
    description: &'static str,
    schema: Value,
    annotations: Value,
    /// A typical call's arguments.
    args: Value,
    want: Class,
}

fn tool(
    name: &'static str,
    description: &'static str,
    props: Value,
    annotations: Value,
    args: Value,
    want: Class,
) -> Tool {
    Tool {
        name,
        description,
        schema: json!({"type": "object", "properties": props}),
        annotations,
        args,
        want,
    }
}

fn check(tools: &[Tool]) {
    let cl = Classifier::default_rules();
    let mut wrong = Vec::new();
    for t in tools {
        let decl = ToolDeclaration {
            name: t.name,
            description: Some(t.description),
            input_schema: Some(&t.schema),
            annotations: Some(&t.annotations),
        };
        let profile = cl.profile(&decl);
        let c = cl
            .classify_declared(t.name, &t.args, None, Some(&profile))
            .expect("the default set has a default");
        let i = c.implication;
        let money = i.d >= DataExposure::Sensitive && i.t == ToolEscalation::Network;
        let ok = match t.want {
            Class::Read => i.t == ToolEscalation::ReadOnly,
            Class::Write => i.t >= ToolEscalation::FileWrite,
            Class::Network => i.t == ToolEscalation::Network && !money,
            Class::Money => money,
            Class::Irreversible => {
                i.t >= ToolEscalation::FileWrite && i.r == Reversibility::Irreversible
            }
        };
        // Whatever the class, the name-only classification (the hook, `monitor eval`) is never
        // above the declared one: a declaration only raises.
        let plain = cl.classify(t.name, &t.args).unwrap().implication;
        assert_eq!(augur_gate::classifier::join(plain, i), i, "{}", t.name);
        if !ok {
            wrong.push(format!(
                "{}: want {:?}, got {}·{}·{} ({})",
                t.name,
                t.want,
                i.d,
                i.t,
                i.r,
                cl.describe_classification(&c)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn ro() -> Value {
    json!({"readOnlyHint": true})
}

fn rw() -> Value {
    json!({"readOnlyHint": false})
}

#[test]
fn a_github_like_server() {
    let repo = json!({"owner": {"type": "string"}, "repo": {"type": "string"}});
    let with = |extra: Value| {
        let mut p = repo.clone();
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    check(&[
        tool(
            "get_file_contents",
            "Get the contents of a file or directory from a GitHub repository",
            with(json!({"path": {"type": "string"}})),
            ro(),
            json!({"owner": "octo", "repo": "hello", "path": "README.md"}),
            Class::Read,
        ),
        tool(
            "search_repositories",
            "Search for GitHub repositories",
            json!({"query": {"type": "string"}}),
            ro(),
            json!({"query": "rust regex"}),
            Class::Read,
        ),
        tool(
            "list_commits",
            "Get list of commits of a branch",
            with(json!({"sha": {"type": "string"}})),
            ro(),
            json!({"owner": "octo", "repo": "hello"}),
            Class::Read,
        ),
        tool(
            "star_repository",
            "Star a GitHub repository",
            repo.clone(),
            rw(),
            json!({"owner": "octo", "repo": "hello"}),
            Class::Network,
        ),
        tool(
            "unstar_repository",
            "Unstar a GitHub repository",
            repo.clone(),
            rw(),
            json!({"owner": "octo", "repo": "hello"}),
            Class::Network,
        ),
        tool(
            "fork_repository",
            "Fork a GitHub repository to your account or specified organization",
            with(json!({"organization": {"type": "string"}})),
            rw(),
            json!({"owner": "octo", "repo": "hello"}),
            Class::Network,
        ),
        tool(
            "follow_user",
            "Follow a GitHub user",
            json!({"username": {"type": "string"}}),
            json!({}),
            json!({"username": "octocat"}),
            Class::Network,
        ),
        tool(
            "create_issue",
            "Create a new issue in a GitHub repository",
            with(json!({"title": {"type": "string"}, "body": {"type": "string"}})),
            rw(),
            json!({"owner": "octo", "repo": "hello", "title": "bug", "body": "it breaks"}),
            Class::Write,
        ),
        tool(
            "add_issue_comment",
            "Add a comment to a specific issue in a GitHub repository",
            with(json!({"issue_number": {"type": "number"}, "body": {"type": "string"}})),
            rw(),
            json!({"owner": "octo", "repo": "hello", "issue_number": 3, "body": "+1"}),
            Class::Network,
        ),
        tool(
            "merge_pull_request",
            "Merge a pull request",
            with(json!({"pull_number": {"type": "number"}})),
            json!({"readOnlyHint": false, "destructiveHint": true}),
            json!({"owner": "octo", "repo": "hello", "pull_number": 4}),
            Class::Irreversible,
        ),
        tool(
            "add_collaborator",
            "Add a repository collaborator",
            with(json!({"username": {"type": "string"}, "permission": {"type": "string"}})),
            rw(),
            json!({"owner": "octo", "repo": "hello", "username": "mallory", "permission": "admin"}),
            Class::Network,
        ),
        tool(
            "add_ssh_key",
            "Adds a public SSH key to the authenticated user's account",
            json!({"title": {"type": "string"}, "key": {"type": "string"}}),
            rw(),
            json!({"title": "laptop", "key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG"}),
            Class::Write,
        ),
        tool(
            "update_repository_settings",
            "Update a repository's settings (visibility, default branch)",
            with(json!({"private": {"type": "boolean"}, "default_branch": {"type": "string"}})),
            rw(),
            json!({"owner": "octo", "repo": "hello", "private": false}),
            Class::Write,
        ),
        tool(
            "delete_repository",
            "Delete a repository. This cannot be undone.",
            repo.clone(),
            json!({"destructiveHint": true}),
            json!({"owner": "octo", "repo": "hello"}),
            Class::Irreversible,
        ),
        tool(
            "create_webhook",
            "Create a repository webhook",
            with(json!({"url": {"type": "string", "format": "uri"}, "events": {"type": "array"}})),
            rw(),
            json!({"owner": "octo", "repo": "hello", "url": "https://hooks.example/x"}),
            Class::Network,
        ),
        tool(
            "push_files",
            "Push multiple files to a GitHub repository in a single commit",
            with(
                json!({"branch": {"type": "string"}, "files": {"type": "array"}, "message": {"type": "string"}}),
            ),
            rw(),
            json!({"owner": "octo", "repo": "hello", "branch": "main"}),
            Class::Network,
        ),
        tool(
            "set_actions_secret",
            "Create or update a repository secret",
            with(json!({"secret_name": {"type": "string"}, "value": {"type": "string"}})),
            rw(),
            json!({"owner": "octo", "repo": "hello", "secret_name": "TOKEN", "value": "x"}),
            Class::Write,
        ),
    ]);
}

#[test]
fn a_shop() {
    check(&[
        tool(
            "search_products",
            "Search the catalogue",
            json!({"query": {"type": "string"}}),
            ro(),
            json!({"query": "kettle"}),
            Class::Read,
        ),
        tool(
            "get_product",
            "Get a product's details",
            json!({"product_id": {"type": "string"}}),
            ro(),
            json!({"product_id": "p-17"}),
            Class::Read,
        ),
        tool(
            "add_to_cart",
            "Add a product to the shopping cart",
            json!({"product_id": {"type": "string"}, "quantity": {"type": "integer"}}),
            rw(),
            json!({"product_id": "p-17", "quantity": 2}),
            Class::Write,
        ),
        tool(
            "remove_from_cart",
            "Remove a product from the cart",
            json!({"product_id": {"type": "string"}}),
            rw(),
            json!({"product_id": "p-17"}),
            Class::Write,
        ),
        tool(
            "checkout",
            "Pay for the cart with a saved payment method",
            json!({"payment_method_id": {"type": "string"}}),
            json!({"destructiveHint": true}),
            json!({"payment_method_id": "card-1"}),
            Class::Money,
        ),
        tool(
            "place_order",
            "Place the order for the items in the cart",
            json!({"shipping_address": {"type": "string"}}),
            rw(),
            json!({"shipping_address": "1 Main St"}),
            Class::Money,
        ),
        tool(
            "refund_order",
            "Refund an order",
            json!({"order_id": {"type": "string"}, "amount": {"type": "number"}}),
            rw(),
            json!({"order_id": "o-9", "amount": 12.5}),
            Class::Money,
        ),
        tool(
            "send_gift_card",
            "Send a gift card by e-mail",
            json!({"recipient_email": {"type": "string", "format": "email"}, "amount": {"type": "number"}}),
            rw(),
            json!({"recipient_email": "a@b.example", "amount": 20}),
            Class::Money,
        ),
        tool(
            "apply_coupon",
            "Apply a discount code to the cart",
            json!({"code": {"type": "string"}}),
            json!({}),
            json!({"code": "SAVE10"}),
            Class::Write,
        ),
        tool(
            "update_shipping_address",
            "Change the shipping address of the account",
            json!({"address": {"type": "string"}}),
            rw(),
            json!({"address": "1 Main St"}),
            Class::Write,
        ),
        tool(
            "submit_review",
            "Post a review of a product",
            json!({"product_id": {"type": "string"}, "rating": {"type": "integer"}, "text": {"type": "string"}}),
            json!({}),
            json!({"product_id": "p-17", "rating": 5, "text": "great"}),
            Class::Network,
        ),
        tool(
            "subscribe_newsletter",
            "Subscribe an address to the newsletter",
            json!({"email": {"type": "string", "format": "email"}}),
            json!({}),
            json!({"email": "a@b.example"}),
            Class::Network,
        ),
        tool(
            "update_preferences",
            "Change the account's notification preferences",
            json!({"marketing": {"type": "boolean"}}),
            json!({}),
            json!({"marketing": false}),
            Class::Write,
        ),
    ]);
}

#[test]
fn a_calendar() {
    let people = json!({"title": {"type": "string"}, "start": {"type": "string", "format": "date-time"}, "attendees": {"type": "array", "items": {"type": "string", "format": "email"}}});
    check(&[
        tool(
            "list_events",
            "List the events between two dates",
            json!({"from": {"type": "string"}, "to": {"type": "string"}}),
            ro(),
            json!({"from": "2026-01-01", "to": "2026-01-02"}),
            Class::Read,
        ),
        tool(
            "create_event",
            "Create an event",
            people.clone(),
            json!({}),
            json!({"title": "sync", "start": "2026-01-01T10:00:00Z"}),
            Class::Write,
        ),
        tool(
            "create_event",
            "Create an event",
            people.clone(),
            json!({}),
            json!({"title": "sync", "start": "2026-01-01T10:00:00Z", "attendees": ["x@partner.example"]}),
            Class::Network,
        ),
        tool(
            "update_event",
            "Change an event's title or time",
            json!({"event_id": {"type": "string"}, "title": {"type": "string"}}),
            json!({}),
            json!({"event_id": "e1", "title": "sync"}),
            Class::Write,
        ),
        tool(
            "delete_event",
            "Delete an event",
            json!({"event_id": {"type": "string"}}),
            json!({"destructiveHint": true}),
            json!({"event_id": "e1"}),
            Class::Irreversible,
        ),
        tool(
            "respond_to_invitation",
            "Accept or decline an invitation",
            json!({"event_id": {"type": "string"}, "response": {"type": "string"}}),
            json!({"readOnlyHint": false, "openWorldHint": true}),
            json!({"event_id": "e1", "response": "accept"}),
            Class::Network,
        ),
        tool(
            "share_calendar",
            "Give someone access to a calendar",
            json!({"calendar_id": {"type": "string"}, "email": {"type": "string", "format": "email"}, "role": {"type": "string"}}),
            json!({}),
            json!({"calendar_id": "c1", "email": "x@partner.example", "role": "writer"}),
            Class::Network,
        ),
        tool(
            "add_attendees",
            "Add attendees to an event",
            json!({"event_id": {"type": "string"}, "attendees": {"type": "array"}}),
            json!({}),
            json!({"event_id": "e1", "attendees": ["x@partner.example"]}),
            Class::Network,
        ),
    ]);
}

#[test]
fn an_airline_customer_service() {
    check(&[
        tool(
            "get_user_details",
            "Get the details of a user",
            json!({"user_id": {"type": "string"}}),
            json!({}),
            json!({"user_id": "mia_li_3668"}),
            Class::Read,
        ),
        tool(
            "search_direct_flight",
            "Search direct flights between two cities on a date",
            json!({"origin": {"type": "string"}, "destination": {"type": "string"}, "date": {"type": "string"}}),
            json!({}),
            json!({"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
            Class::Read,
        ),
        tool(
            "list_all_airports",
            "List all airports and their cities",
            json!({}),
            json!({}),
            json!({}),
            Class::Read,
        ),
        tool(
            "book_reservation",
            "Book a reservation",
            json!({"user_id": {"type": "string"}, "origin": {"type": "string"}, "destination": {"type": "string"}, "flights": {"type": "array"}, "payment_methods": {"type": "array"}}),
            json!({}),
            json!({"user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flights": [], "payment_methods": [{"payment_id": "credit_card_1", "amount": 300}]}),
            Class::Money,
        ),
        tool(
            "cancel_reservation",
            "Cancel the whole reservation",
            json!({"reservation_id": {"type": "string"}}),
            json!({}),
            json!({"reservation_id": "ZFA04Y"}),
            Class::Write,
        ),
        tool(
            "update_reservation_baggages",
            "Update the baggage information of a reservation",
            json!({"reservation_id": {"type": "string"}, "total_baggages": {"type": "integer"}, "payment_id": {"type": "string"}}),
            json!({}),
            json!({"reservation_id": "ZFA04Y", "total_baggages": 2, "payment_id": "gift_card_1"}),
            Class::Write,
        ),
        tool(
            "send_certificate",
            "Send a certificate to a user. Be careful!",
            json!({"user_id": {"type": "string"}, "amount": {"type": "number"}}),
            json!({}),
            json!({"user_id": "mia_li_3668", "amount": 100}),
            Class::Network,
        ),
        tool(
            "calculate",
            "Calculate the result of a mathematical expression",
            json!({"expression": {"type": "string"}}),
            json!({}),
            json!({"expression": "2 + 2"}),
            Class::Read,
        ),
        tool(
            "think",
            "Use the tool to think about something",
            json!({"thought": {"type": "string"}}),
            json!({}),
            json!({"thought": "the user wants ..."}),
            Class::Read,
        ),
        tool(
            "transfer_funds",
            "Move money between accounts",
            json!({"from_account": {"type": "string"}, "to_account": {"type": "string"}, "amount": {"type": "number"}}),
            json!({}),
            json!({"from_account": "a1", "to_account": "a2", "amount": 50}),
            Class::Money,
        ),
    ]);
}

/// `transfer_to_human_agents` moves no money: "transfer" is not a money word, and it has no
/// amount. It still changes something (a hand-off), so it is a write.
#[test]
fn a_hand_off_is_not_a_money_movement() {
    let cl = Classifier::default_rules();
    let args = json!({"summary": "the user wants a refund for order #W123"});
    let c = cl.classify("transfer_to_human_agents", &args).unwrap();
    let i = c.implication;
    assert!(
        !(i.d >= DataExposure::Sensitive && i.t == ToolEscalation::Network),
        "{}·{}·{}",
        i.d,
        i.t,
        i.r
    );
    assert!(i.t >= ToolEscalation::FileWrite);
}

/// A declaration cannot lower: `readOnlyHint: true` on a tool whose name sends, or whose
/// schema sends, leaves it a send.
#[test]
fn read_only_hint_never_lowers() {
    let cl = Classifier::default_rules();
    let schema = json!({"type": "object", "properties": {
        "to": {"type": "string", "format": "email"}, "body": {"type": "string"}}});
    let args = json!({"to": "x@evil.example", "body": "hi"});
    for name in ["send_email", "dispatch"] {
        let decl = ToolDeclaration {
            name,
            description: Some("Does something harmless."),
            input_schema: Some(&schema),
            annotations: Some(
                &json!({"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}),
            ),
        };
        let p = cl.profile(&decl);
        let c = cl.classify_declared(name, &args, None, Some(&p)).unwrap();
        assert_eq!(c.implication.t, ToolEscalation::Network, "{name}");
        assert_eq!(c.implication.r, Reversibility::Irreversible, "{name}");
    }
    // The schema is what says `dispatch` sends.
    let p = cl.profile(&ToolDeclaration {
        name: "dispatch",
        input_schema: Some(&schema),
        ..Default::default()
    });
    assert!(p.by.contains(Declared::SCHEMA_SEND), "{p:?}");
}

/// Each annotation raises one component; none lowers one; absent hints say nothing.
#[test]
fn annotations_raise_only() {
    let cl = Classifier::default_rules();
    let read = cl.classify("get_report", &json!({})).unwrap().implication;
    let raised = |ann: Value| -> Implication {
        let p = cl.profile(&ToolDeclaration {
            name: "get_report",
            annotations: Some(&ann),
            ..Default::default()
        });
        cl.classify_declared("get_report", &json!({}), None, Some(&p))
            .unwrap()
            .implication
    };
    assert_eq!(raised(json!({})), read);
    assert_eq!(raised(json!({"readOnlyHint": true})), read);
    assert_eq!(
        raised(json!({"destructiveHint": false, "idempotentHint": true})),
        read
    );
    let d = raised(json!({"destructiveHint": true}));
    assert_eq!(
        (d.t, d.r),
        (ToolEscalation::FileWrite, Reversibility::Irreversible)
    );
    assert_eq!(
        raised(json!({"readOnlyHint": false})).t,
        ToolEscalation::FileWrite
    );
    let ow = raised(json!({"readOnlyHint": false, "openWorldHint": true}));
    assert_eq!(ow.t, ToolEscalation::Network);
    let ni = raised(json!({"idempotentHint": false}));
    assert_eq!(
        (ni.t, ni.r),
        (ToolEscalation::FileWrite, Reversibility::Partially)
    );
    // Read-only and open-world is a read of the world: nothing to raise.
    assert_eq!(
        raised(json!({"readOnlyHint": true, "openWorldHint": true})),
        read
    );
}

/// The description's verb raises (and only raises): a tool whose name says nothing.
#[test]
fn the_description_verb_raises() {
    let cl = Classifier::default_rules();
    let prof = |desc: &str| {
        cl.profile(&ToolDeclaration {
            name: "get_thing",
            description: Some(desc),
            ..Default::default()
        })
    };
    let p = prof("Sends the thing to the given address.");
    assert!(p.by.contains(Declared::DESCRIPTION_VERB), "{p:?}");
    assert_eq!(p.floor.t, ToolEscalation::Network);
    let p = prof("Use this tool to permanently delete the thing");
    assert!(p.by.contains(Declared::DESCRIPTION_PERMANENT), "{p:?}");
    assert_eq!(p.floor.r, Reversibility::Irreversible);
    let p = prof("Returns the list of things. Sends nothing.");
    assert!(p.by.is_empty(), "{p:?}");
    let p = prof("Gets the thing by its id.");
    assert!(p.by.is_empty(), "{p:?}");
    // A description that opens with a noun has no leading verb: the nouns after it (an
    // address *book*, a *post*) are not verbs.
    let p = prof("The user's address book; with a query, the contacts matching it.");
    assert!(p.by.is_empty(), "{p:?}");
    let p = prof("A blog post's comments.");
    assert!(p.by.is_empty(), "{p:?}");
    // The verb phrase still reads past the lead-in, and the verb's object still counts.
    let p = prof("Use this tool to book a hotel room for the user.");
    assert!(p.by.contains(Declared::DESCRIPTION_VERB), "{p:?}");
    let p = prof("Stars a repository on GitHub.");
    assert!(p.by.contains(Declared::DESCRIPTION_VERB), "{p:?}");
}

/// A read by its name with an amount and a payee in its schema (a search of transactions)
/// stays a read; an unknown verb with them is a money movement.
#[test]
fn money_by_what_the_schema_does() {
    let cl = Classifier::default_rules();
    let schema = json!({"type": "object", "properties": {
        "recipient": {"type": "string"}, "amount": {"type": "number"}}});
    let class = |name: &str| {
        let p = cl.profile(&ToolDeclaration {
            name,
            input_schema: Some(&schema),
            annotations: Some(&json!({"readOnlyHint": true})),
            ..Default::default()
        });
        cl.classify_declared(name, &json!({}), None, Some(&p))
            .unwrap()
            .implication
    };
    assert_eq!(class("search_transactions").t, ToolEscalation::ReadOnly);
    let m = class("remit");
    assert_eq!(
        (m.d, m.t),
        (DataExposure::Sensitive, ToolEscalation::Network)
    );
}
