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
    /// the tables is left as it is (its load names the missing table).
    pub keys: &'static [&'static str],
}

/// Fills, for each of `fills` whose axis lists a value, its key with the axis's first value
/// where the config leaves the key out; whether anything was filled. A key the config gives
/// is kept (each point replaces it anyway); an axis that is not a list, or is empty, fills
/// nothing (the config's own checks name it).
pub fn fill_from_axes(table: &mut Table, fills: &[AxisFill]) -> bool {
    let Some(sweep) = table.get("sweep").and_then(|s| s.as_table()) else {
        return false;
    };
    let wanted: Vec<(&[&str], toml::Value)> = fills
        .iter()
        .filter_map(|f| {
            let first = sweep.get(f.axis)?.as_array()?.first()?;
            let value = match f.field {
                Some(field) => first.as_table()?.get(field)?,
                None => first,
            };
            Some((f.keys, value.clone()))
        })
        .collect();
    let mut filled = false;
    for (keys, value) in wanted {
        // The first of the key's tables the config has.
        let place = keys.iter().find_map(|key| {
            let (section, name) = key.split_once('.')?;
            table
                .get(section)
                .is_some_and(toml::Value::is_table)
                .then_some((section, name))
        });
        if let Some((section, name)) = place
            && let Some(t) = table.get_mut(section).and_then(|t| t.as_table_mut())
            && !t.contains_key(name)
        {
            t.insert(name.to_string(), value);
            filled = true;
        }
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILLS: [AxisFill; 3] = [
        AxisFill {
            axis: "depths",
            field: None,
            keys: &["model.depth", "resnet.depth"],
        },
        AxisFill {
            axis: "families",
            field: Some("activation"),
            keys: &["model.activation"],
        },
        AxisFill {
            axis: "lrs",
            field: None,
            keys: &["optim.lr"],
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
        assert!(fill_from_axes(&mut t, &FILLS));
        assert_eq!(t["model"]["depth"].as_integer(), Some(3));
        assert_eq!(t["model"]["activation"].as_str(), Some("relu"));
        // No lrs axis: optim.lr stays out (the load names it).
        assert!(!t["optim"].as_table().unwrap().contains_key("lr"));
    }

    #[test]
    fn a_given_key_is_kept_and_the_first_table_present_takes_it() {
        let mut t = table("[sweep]\ndepths = [3]\n[model]\ndepth = 1\n");
        assert!(!fill_from_axes(&mut t, &FILLS), "nothing to fill");
        assert_eq!(t["model"]["depth"].as_integer(), Some(1));
        let mut r = table("[sweep]\ndepths = [20, 56]\n[resnet]\nvariant = \"fixup\"\n");
        assert!(fill_from_axes(&mut r, &FILLS));
        assert_eq!(r["resnet"]["depth"].as_integer(), Some(20));
        assert!(!r.contains_key("model"), "no table made");
    }

    #[test]
    fn no_sweep_no_table_an_empty_or_malformed_axis_fill_nothing() {
        for text in [
            "[model]\nwidth = 8\n",
            "[sweep]\ndepths = [3]\n",
            "[sweep]\ndepths = []\n[model]\n",
            "[sweep]\ndepths = 3\n[model]\n",
            "[sweep]\nfamilies = [\"relu\"]\n[model]\n",
        ] {
            let mut t = table(text);
            let before = t.clone();
            assert!(!fill_from_axes(&mut t, &FILLS), "{text}");
            assert_eq!(t, before, "{text}");
        }
    }
}
