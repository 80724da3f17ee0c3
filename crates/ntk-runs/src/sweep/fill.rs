//! A sweep config need not give the base config a key that one of its axes sets at every
//! point: before the base is read, each such axis fills its key with its first value where
//! the config leaves it out ([`fill_from_axes`]). Every point sets its own value, so the
//! filled one is never used; without it a config whose `[sweep] depths` sets `model.depth`
//! everywhere was refused for lacking `model.depth` (seventy-eighth hostile round, N1).

use toml::Table;

/// A required key of the base config that an axis of `[sweep]` sets at every point.
#[derive(Clone, Copy, Debug)]
pub struct AxisFill {
    /// The axis, a list in `[sweep]` (`depths`).
    pub axis: &'static str,
    /// The field of the axis's values that gives the key's value (`families`' `activation`),
    /// or `None` for the value itself.
    pub field: Option<&'static str>,
    /// The key, one per table it may live in; the first whose table the config has is
    /// filled (`model.depth` for an MLP, `resnet.depth` for a ResNet). A config with none of
    /// the tables is left as it is (its load names the missing table), but for a key of one
    /// table alone, whose table is then made ([`fill_from_axes`]).
    pub keys: &'static [&'static str],
    /// Whether the tool runs an empty axis on the base config's value (ntk-train's axes, the
    /// probe's optional ones), so that giving the key is advice that helps; where an empty
    /// axis is refused (the probe's `depths`, `activations`) it is not offered (eighty-seventh
    /// hostile round, D5: "or give model.depth" led to two other refusals).
    pub empty_keeps_base: bool,
}

/// Fills, for each of `fills` whose axis lists a value, its key with the axis's first value
/// where the config leaves the key out; whether anything was filled. A key the config gives
/// is kept (each point replaces it anyway). Where the key is left out and its axis is there
/// but is no list of values (or an empty one, or its first value lacks the field), the
/// error is `(key, why)`, naming the axis: the key's own "missing field" would blame the
/// wrong place. An axis that is absent fills nothing (the load names the missing key).
pub fn fill_from_axes(table: &mut Table, fills: &[AxisFill]) -> Result<bool, (String, String)> {
    let Some(sweep) = table.get("sweep").and_then(|s| s.as_table()).cloned() else {
        return Ok(false);
    };
    let mut filled = false;
    for f in fills {
        let Some(axis) = sweep.get(f.axis) else {
            continue;
        };
        // The first of the key's tables the config has; a key of one table only fills that
        // table even where the config leaves the whole table out (eighty-fifth hostile
        // round, D5: a probe sweep whose axes set every required key of `[model]` was
        // refused for lacking `[model]`, as a training sweep for lacking `[optim]`).
        let Some((section, name)) = f.keys.iter().find_map(|key| {
            let (section, name) = key.split_once('.')?;
            table
                .get(section)
                .is_some_and(toml::Value::is_table)
                .then_some((section, name))
        }) else {
            // Never an MLP's table beside a ResNet's, nor the reverse: which network the
            // config describes is its own to say.
            let rival = |section: &str| match section {
                "model" => table.contains_key("resnet"),
                "resnet" => table.contains_key("model"),
                _ => false,
            };
            if let [key] = f.keys
                && let Some((section, _)) = key.split_once('.')
                && !table.contains_key(section)
                && !rival(section)
                && axis.as_array().is_some_and(|a| !a.is_empty())
            {
                table.insert(section.to_string(), toml::Value::Table(Table::new()));
                // Filled below, on the next pass over this fill's table.
                return fill_from_axes(table, fills).map(|_| true);
            }
            continue;
        };
        let Some(t) = table.get_mut(section).and_then(|t| t.as_table_mut()) else {
            continue;
        };
        if t.contains_key(name) {
            continue;
        }
        let first = axis.as_array().and_then(|a| a.first());
        let value = match (first, f.field) {
            (Some(v), Some(field)) => v.as_table().and_then(|v| v.get(field)),
            (v, None) => v,
            (None, Some(_)) => None,
        };
        let Some(value) = value else {
            // Advice that helps (eighty-fifth hostile round, D7: a list whose first value
            // lacks the field was told to be "a non-empty list", and giving the key only led
            // to that value's own error).
            let (what, fix) = match (axis.as_array(), f.field) {
                (Some(a), _) if a.is_empty() && f.empty_keeps_base => (
                    "empty".to_string(),
                    format!(
                        "give sweep.{} a non-empty list, or give {section}.{name}",
                        f.axis
                    ),
                ),
                (Some(a), _) if a.is_empty() => (
                    "empty".to_string(),
                    format!("give sweep.{} a non-empty list", f.axis),
                ),
                (Some(_), Some(field)) => (
                    format!("a list whose first value has no {field}"),
                    format!("give every value of sweep.{} its {field}", f.axis),
                ),
                _ => (
                    format!("{axis}, not a list of values"),
                    format!("give sweep.{} a list of values", f.axis),
                ),
            };
            return Err((
                format!("{section}.{name}"),
                format!(
                    "sweep.{} sets it throughout the sweep, and is {what}: {fix}",
                    f.axis
                ),
            ));
        };
        t.insert(name.to_string(), value.clone());
        filled = true;
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILLS: [AxisFill; 3] = [
        AxisFill {
            axis: "depths",
            field: None,
            keys: &["model.depth", "resnet.depth"],
            empty_keeps_base: true,
        },
        AxisFill {
            axis: "families",
            field: Some("activation"),
            keys: &["model.activation"],
            empty_keeps_base: true,
        },
        AxisFill {
            axis: "lrs",
            field: None,
            keys: &["optim.lr"],
            empty_keeps_base: true,
        },
    ];

    fn table(text: &str) -> Table {
        toml::from_str(text).expect("toml")
    }

    #[test]
    fn an_axis_fills_its_key_where_the_config_leaves_it_out() {
        let mut t = table(
            "[sweep]\ndepths = [3, 5]\nfamilies = [{ activation = \"relu\" }]\n\
             [model]\nwidth = 8\n[optim]\n",
        );
        assert_eq!(fill_from_axes(&mut t, &FILLS), Ok(true));
        assert_eq!(t["model"]["depth"].as_integer(), Some(3));
        assert_eq!(t["model"]["activation"].as_str(), Some("relu"));
        // No lrs axis: optim.lr stays out (the load names it).
        assert!(!t["optim"].as_table().unwrap().contains_key("lr"));
    }

    /// Eighty-fifth hostile round, D5: a table the config leaves out whole is made where an
    /// axis sets a key of that table alone (`[optim]` by `lrs`), never an MLP's beside a
    /// ResNet's; a key of two tables (`depths`) makes neither.
    #[test]
    fn a_table_left_out_whole_is_made_for_its_axis() {
        let mut t = table("[sweep]\nlrs = [0.1]\ndepths = [3]\n");
        assert_eq!(fill_from_axes(&mut t, &FILLS), Ok(true));
        assert_eq!(t["optim"]["lr"].as_float(), Some(0.1));
        assert!(!t.contains_key("model") && !t.contains_key("resnet"));
        let mut t = table("[sweep]\nfamilies = [{ activation = \"relu\" }]\n[resnet]\n");
        assert_eq!(fill_from_axes(&mut t, &FILLS), Ok(false));
        assert!(!t.contains_key("model"));
    }

    #[test]
    fn a_given_key_is_kept_and_the_first_table_present_takes_it() {
        let mut t = table("[sweep]\ndepths = [3]\n[model]\ndepth = 1\n");
        assert_eq!(fill_from_axes(&mut t, &FILLS), Ok(false), "nothing to fill");
        assert_eq!(t["model"]["depth"].as_integer(), Some(1));
        let mut r = table("[sweep]\ndepths = [20, 56]\n[resnet]\nvariant = \"fixup\"\n");
        assert_eq!(fill_from_axes(&mut r, &FILLS), Ok(true));
        assert_eq!(r["resnet"]["depth"].as_integer(), Some(20));
        assert!(!r.contains_key("model"), "no table made");
    }

    #[test]
    fn no_sweep_or_no_table_fills_nothing() {
        for text in [
            "[model]\nwidth = 8\n",
            "[sweep]\ndepths = [3]\n",
            "[sweep]\nseeds = [3]\n[model]\n",
            "[sweep]\ndepths = []\n[model]\ndepth = 2\n",
        ] {
            let mut t = table(text);
            let before = t.clone();
            assert_eq!(fill_from_axes(&mut t, &FILLS), Ok(false), "{text}");
            assert_eq!(t, before, "{text}");
        }
    }

    #[test]
    fn an_axis_that_cannot_fill_a_missing_key_is_named() {
        for (text, key, what) in [
            (
                "[sweep]\ndepths = []\n[model]\n",
                "model.depth",
                "sweep.depths sets it throughout the sweep, and is empty",
            ),
            (
                "[sweep]\ndepths = 3\n[model]\n",
                "model.depth",
                "and is 3, not a list of values",
            ),
            (
                "[sweep]\nfamilies = [\"relu\"]\n[model]\n",
                "model.activation",
                "a list whose first value has no activation: give every value of \
                 sweep.families its activation",
            ),
        ] {
            let (k, why) = fill_from_axes(&mut table(text), &FILLS).unwrap_err();
            assert_eq!(k, key, "{text}");
            assert!(why.contains(what), "{text}: {why}");
        }
    }
}
