//! Routing resources and prompts to the upstreams that serve them, and following their list changes.

use super::*;

/// Follows the upstreams' changes: a tool list that changed (or a restart) is listed again
/// and the table rebuilt; the client is told of every change it may see.
pub(super) async fn follow_changes(
    inner: Weak<Inner>,
    mut changes: tokio::sync::mpsc::UnboundedReceiver<(usize, Changed)>,
) {
    while let Some((i, what)) = changes.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        let peer = inner
            .client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match what {
            Changed::Tools | Changed::Restarted => {
                if relist(&inner, i).await {
                    if let Some(peer) = &peer {
                        let _ = peer.notify_tool_list_changed().await;
                    }
                }
            }
            Changed::Resources => {
                if let Some(peer) = &peer {
                    let _ = peer.notify_resource_list_changed().await;
                }
            }
            Changed::Prompts => {
                if let Some(peer) = &peer {
                    let _ = peer.notify_prompt_list_changed().await;
                }
            }
        }
    }
}

/// Lists upstream `i`'s tools again and rebuilds the table; whether the served tools changed.
/// A listing that fails keeps the last one (a call to a tool the upstream dropped then gets
/// the upstream's own error; nothing is forwarded unguarded either way).
pub(super) async fn relist(inner: &Inner, i: usize) -> bool {
    let Ok(tools) = inner.upstreams[i].list_tools().await else {
        return false;
    };
    let names: Vec<&str> = inner.upstreams.iter().map(Upstream::name).collect();
    let reserved: Vec<&str> = inner.reserved.iter().map(String::as_str).collect();
    let mut t = inner.table.write().unwrap_or_else(|e| e.into_inner());
    let mut listed = t.listed.clone();
    listed[i] = tools;
    let new = build_table(
        &names,
        listed,
        &reserved,
        Some(&t),
        inner.server.config().monitor.classifier(),
    );
    let shown = |t: &Table| -> Vec<Value> {
        t.tools
            .iter()
            .map(|p| serde_json::to_value(&p.tool).unwrap_or(Value::Null))
            .collect()
    };
    let changed = shown(&t) != shown(&new);
    {
        let mut g = inner
            .gateway_tools
            .write()
            .unwrap_or_else(|e| e.into_inner());
        for p in &new.tools {
            g.insert(p.exposed.clone());
            g.insert(p.original.clone());
        }
    }
    *t = new;
    changed
}

impl Gateway {
    /// The upstreams that declared resources (or prompts).
    pub(super) fn with(&self, resources: bool) -> Vec<usize> {
        (0..self.inner.upstreams.len())
            .filter(|&i| {
                let c = self.inner.upstreams[i].capabilities();
                if resources {
                    c.resources
                } else {
                    c.prompts
                }
            })
            .collect()
    }

    /// Lists the resources and templates of every upstream that has them and routes their
    /// URIs (a URI two upstreams list is served as `augur-upstream://UPSTREAM/URI`).
    pub(super) async fn list_resources_routed(
        &self,
    ) -> Result<
        (
            Vec<rmcp::model::Resource>,
            Vec<rmcp::model::ResourceTemplate>,
        ),
        ErrorData,
    > {
        let inner = &self.inner;
        let mut lists = Vec::new();
        let mut templates = Vec::new();
        for i in self.with(true) {
            let up = &inner.upstreams[i];
            lists.push((
                i,
                up.list_resources().await.map_err(|f| upstream_error(&f))?,
            ));
            // Templates are optional: an upstream without them answers an error.
            if let Ok(ts) = up.list_resource_templates().await {
                templates.extend(ts.into_iter().map(|t| (i, t)));
            }
        }
        let mut count: HashMap<String, usize> = HashMap::new();
        for (_, rs) in &lists {
            let own: HashSet<&str> = rs.iter().map(|r| r.uri.as_str()).collect();
            for u in own {
                *count.entry(u.to_string()).or_default() += 1;
            }
        }
        let mut routes = Routes::default();
        let mut out = Vec::new();
        for (i, rs) in lists {
            for mut r in rs {
                let original = r.uri.clone();
                if count[&original] > 1 {
                    r.uri = format!("{CLASH_SCHEME}{}/{original}", inner.upstreams[i].name());
                }
                routes.resources.insert(r.uri.clone(), (i, original));
                out.push(r);
            }
        }
        routes.templates = templates
            .iter()
            .map(|(i, t)| {
                let lit = t.uri_template.split('{').next().unwrap_or("").to_string();
                (*i, lit)
            })
            .collect();
        let mut r = inner.routes.lock().unwrap_or_else(|e| e.into_inner());
        routes.prompts = std::mem::take(&mut r.prompts);
        *r = routes;
        Ok((out, templates.into_iter().map(|(_, t)| t).collect()))
    }

    /// The upstream and its URI for `uri`: a listed URI, a clash-rewritten one, or the one
    /// upstream whose template's literal start it has (or the only upstream with resources).
    pub(super) fn route_resource(&self, uri: &str) -> Option<(usize, String)> {
        let inner = &self.inner;
        if let Some(rest) = uri.strip_prefix(CLASH_SCHEME) {
            let (name, original) = rest.split_once('/')?;
            let i = inner.upstreams.iter().position(|u| u.name() == name)?;
            return Some((i, original.to_string()));
        }
        let routes = inner.routes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = routes.resources.get(uri) {
            return Some(r.clone());
        }
        let by_template: HashSet<usize> = routes
            .templates
            .iter()
            .filter(|(_, lit)| !lit.is_empty() && uri.starts_with(lit.as_str()))
            .map(|(i, _)| *i)
            .collect();
        if by_template.len() == 1 {
            return by_template.into_iter().next().map(|i| (i, uri.to_string()));
        }
        let with = self.with(true);
        (with.len() == 1).then(|| (with[0], uri.to_string()))
    }

    /// Lists every upstream's prompts and routes their names (prefixed `UPSTREAM__` on a
    /// clash, as tools are).
    pub(super) async fn list_prompts_routed(&self) -> Result<Vec<rmcp::model::Prompt>, ErrorData> {
        let inner = &self.inner;
        let ids = self.with(false);
        let mut lists = Vec::new();
        for &i in &ids {
            lists.push(
                inner.upstreams[i]
                    .list_prompts()
                    .await
                    .map_err(|f| upstream_error(&f))?,
            );
        }
        let names: Vec<&str> = ids.iter().map(|&i| inner.upstreams[i].name()).collect();
        let originals: Vec<Vec<String>> = lists
            .iter()
            .map(|ps| ps.iter().map(|p| p.name.clone()).collect())
            .collect();
        let exposed = config::exposed_names(&names, &originals, &[]);
        let mut prompts = HashMap::new();
        let mut out = Vec::new();
        for ((&i, ps), ex) in ids.iter().zip(lists).zip(exposed) {
            for (mut p, name) in ps.into_iter().zip(ex) {
                prompts.insert(name.clone(), (i, p.name.clone()));
                p.name = name;
                out.push(p);
            }
        }
        inner
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .prompts = prompts;
        Ok(out)
    }

    pub(super) fn remember_client(&self, peer: &Peer<RoleServer>) {
        let mut c = self.inner.client.lock().unwrap_or_else(|e| e.into_inner());
        if c.is_none() {
            *c = Some(peer.clone());
        }
    }
}
